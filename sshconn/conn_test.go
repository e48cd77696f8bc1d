package sshconn

import (
	"context"
	"errors"
	"testing"
)

func TestSSHConnClosed(t *testing.T) {
	conn := New(Destination{}, Config{})
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Client(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Client after Close: %v", err)
	}
}
