package acpclient

import (
	"sync"
	"unsafe"
)

// boxKind says which chunkBox a queue entry lives in, if any.
type boxKind uint8

const (
	boxNone boxKind = iota
	boxMessage
	boxThought
	boxUser
)

// chunkBoxes keeps the boxes of chunks a SessionUpdateBatcher has been
// given, for the next chunks of the connection: a box is half a kilobyte
// (most of it the ContentBlock), and allocating one per streamed chunk was
// most of a flood's allocation and so of its collection cost. The batcher
// keeps no message-chunk notification past its call (see
// SessionUpdateBatcher); SessionUpdate's notifications are never reused.
// The pools empty themselves over garbage collections, so an idle
// connection holds no boxes.
type chunkBoxes struct {
	pools [boxUser + 1]sync.Pool
}

// getBox returns an empty box of kind k: a reused one, or a new one.
func getBox[T any](b *chunkBoxes, k boxKind) *chunkBox[T] {
	if b != nil {
		if box, ok := b.pools[k].Get().(*chunkBox[T]); ok {
			return box
		}
	}
	return new(chunkBox[T])
}

// putRun empties the boxes among a delivered run's entries and keeps them
// for reuse. Emptying here, on the dispatch goroutine, takes the work off
// the read goroutine, and a kept box refers to nothing.
func (b *chunkBoxes) putRun(run []*inbound) {
	for _, m := range run {
		switch m.box {
		case boxMessage:
			putBox[AgentMessageChunk](b, m)
		case boxThought:
			putBox[AgentThoughtChunk](b, m)
		case boxUser:
			putBox[UserMessageChunk](b, m)
		}
	}
}

// putBox keeps the box whose entry is m. The entry is the box's first
// field, so its address is the box's.
func putBox[T any](b *chunkBoxes, m *inbound) {
	box := (*chunkBox[T])(unsafe.Pointer(m))
	k := m.box
	*box = chunkBox[T]{}
	b.pools[k].Put(box)
}
