package acpclient

import (
	"encoding/json"
)

// Content block types (ContentBlock.Type).
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// ContentBlock is one piece of displayable content: text, an image, audio, a
// link to a resource or an embedded resource. It is one flat struct rather
// than an interface per variant because the hot path (streamed text) decodes
// it in a single pass; Type says which fields mean something. A block of a
// type this package does not know keeps its JSON in Raw and is re-encoded
// from it unchanged.
type ContentBlock struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`        // text
	Data        string            `json:"data,omitempty"`        // image, audio: base64
	MimeType    string            `json:"mimeType,omitempty"`    // image, audio, resource_link
	URI         string            `json:"uri,omitempty"`         // image (optional), resource_link
	Name        string            `json:"name,omitempty"`        // resource_link
	Title       string            `json:"title,omitempty"`       // resource_link
	Description string            `json:"description,omitempty"` // resource_link
	Size        *int64            `json:"size,omitempty"`        // resource_link
	Resource    *ResourceContents `json:"resource,omitempty"`    // resource
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`

	// Raw is the block as received when Type is not one this package knows.
	Raw json.RawMessage `json:"-"`
}

// ResourceContents is the body of an embedded resource: text or a base64 blob.
type ResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// Annotations tell a client how to use or show a content block.
type Annotations struct {
	Audience     []string        `json:"audience,omitempty"`
	LastModified string          `json:"lastModified,omitempty"`
	Priority     *float64        `json:"priority,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: ContentText, Text: text} }

// ImageBlock returns an image content block from base64 data.
func ImageBlock(base64Data, mimeType string) ContentBlock {
	return ContentBlock{Type: ContentImage, Data: base64Data, MimeType: mimeType}
}

// ResourceLinkBlock returns a link to a resource the agent can fetch itself.
func ResourceLinkBlock(uri, name string) ContentBlock {
	return ContentBlock{Type: ContentResourceLink, URI: uri, Name: name}
}

// TextResourceBlock returns an embedded text resource, e.g. an @-mentioned file.
func TextResourceBlock(uri, mimeType, text string) ContentBlock {
	return ContentBlock{Type: ContentResource, Resource: &ResourceContents{URI: uri, MimeType: mimeType, Text: &text}}
}

// knownContentType reports whether t is a content type this package decodes.
func knownContentType(t string) bool {
	switch t {
	case ContentText, ContentImage, ContentAudio, ContentResourceLink, ContentResource:
		return true
	}
	return false
}

// contentBlockFields has ContentBlock's fields without its methods, so that
// encoding/json decodes it in place (no second pass over the bytes).
type contentBlockFields ContentBlock

// UnmarshalJSON decodes any content block; unknown types keep their JSON.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var f contentBlockFields
	if err := lenientUnmarshal(data, &f); err != nil {
		return err
	}
	*b = ContentBlock(f)
	if !knownContentType(b.Type) {
		b.Raw = append(json.RawMessage(nil), data...)
	}
	return nil
}

// MarshalJSON writes the fields of the block's type, with the ones the
// schema requires present even when empty.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	if !knownContentType(b.Type) && len(b.Raw) > 0 {
		return b.Raw, nil
	}
	type text struct {
		Type        string          `json:"type"`
		Text        string          `json:"text"`
		Annotations *Annotations    `json:"annotations,omitempty"`
		Meta        json.RawMessage `json:"_meta,omitempty"`
	}
	type media struct {
		Type        string          `json:"type"`
		Data        string          `json:"data"`
		MimeType    string          `json:"mimeType"`
		URI         string          `json:"uri,omitempty"`
		Annotations *Annotations    `json:"annotations,omitempty"`
		Meta        json.RawMessage `json:"_meta,omitempty"`
	}
	type link struct {
		Type        string          `json:"type"`
		URI         string          `json:"uri"`
		Name        string          `json:"name"`
		MimeType    string          `json:"mimeType,omitempty"`
		Title       string          `json:"title,omitempty"`
		Description string          `json:"description,omitempty"`
		Size        *int64          `json:"size,omitempty"`
		Annotations *Annotations    `json:"annotations,omitempty"`
		Meta        json.RawMessage `json:"_meta,omitempty"`
	}
	type resource struct {
		Type        string            `json:"type"`
		Resource    *ResourceContents `json:"resource"`
		Annotations *Annotations      `json:"annotations,omitempty"`
		Meta        json.RawMessage   `json:"_meta,omitempty"`
	}
	switch b.Type {
	case ContentText:
		return json.Marshal(text{b.Type, b.Text, b.Annotations, b.Meta})
	case ContentImage:
		return json.Marshal(media{b.Type, b.Data, b.MimeType, b.URI, b.Annotations, b.Meta})
	case ContentAudio:
		return json.Marshal(media{b.Type, b.Data, b.MimeType, "", b.Annotations, b.Meta})
	case ContentResourceLink:
		return json.Marshal(link{b.Type, b.URI, b.Name, b.MimeType, b.Title, b.Description, b.Size, b.Annotations, b.Meta})
	case ContentResource:
		return json.Marshal(resource{b.Type, b.Resource, b.Annotations, b.Meta})
	}
	return json.Marshal(contentBlockFields(b))
}

// MarshalJSON writes text or blob, whichever is set, with the required uri.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	type fields ResourceContents
	if r.Text == nil && r.Blob == nil {
		empty := ""
		r.Text = &empty
	}
	return json.Marshal(fields(r))
}
