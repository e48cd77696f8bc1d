//go:build plainwire

package acpclient

// fastWire is false: built with the plainwire tag, every line is decoded
// with encoding/json (see fast.go).
const fastWire = false
