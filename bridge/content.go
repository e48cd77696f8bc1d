package bridge

import "github.com/acphost/acphost/acpclient"

// contentDataLimit bounds the data a message event keeps of a content
// block (see Event.Content): an agent's 50 MiB screenshot must not sit
// whole in the event stream, the journal and every subscriber's queue.
const contentDataLimit = 1 << 20

// boundedContent returns a copy of b whose data is at most
// contentDataLimit bytes, and how many bytes it left out: data over the
// limit is dropped whole, never cut (half an image is no image).
func boundedContent(b acpclient.ContentBlock) (*acpclient.ContentBlock, int) {
	dropped := 0
	if len(b.Data) > contentDataLimit {
		dropped += len(b.Data)
		b.Data = ""
	}
	if r := b.Resource; r != nil {
		cp := *r
		if cp.Text != nil && len(*cp.Text) > contentDataLimit {
			dropped += len(*cp.Text)
			cp.Text = nil
		}
		if cp.Blob != nil && len(*cp.Blob) > contentDataLimit {
			dropped += len(*cp.Blob)
			cp.Blob = nil
		}
		b.Resource = &cp
	}
	return &b, dropped
}

// contentDataBytes is the data a content block holds, for memory bounds.
func contentDataBytes(b *acpclient.ContentBlock) int {
	n := len(b.Data) + len(b.Text)
	if r := b.Resource; r != nil {
		if r.Text != nil {
			n += len(*r.Text)
		}
		if r.Blob != nil {
			n += len(*r.Blob)
		}
	}
	return n
}
