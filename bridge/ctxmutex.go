package bridge

import (
	"context"
	"sync"
)

// ctxMutex is a mutex whose Lock gives up when its context ends. Its zero
// value is unlocked.
type ctxMutex struct {
	once sync.Once
	ch   chan struct{}
}

func (m *ctxMutex) init() { m.once.Do(func() { m.ch = make(chan struct{}, 1) }) }

// LockCtx locks m, or returns ctx's error if ctx ends first.
func (m *ctxMutex) LockCtx(ctx context.Context) error {
	m.init()
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Lock locks m.
func (m *ctxMutex) Lock() { m.init(); m.ch <- struct{}{} }

// TryLock locks m if it is free.
func (m *ctxMutex) TryLock() bool {
	m.init()
	select {
	case m.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

// Unlock unlocks m.
func (m *ctxMutex) Unlock() { <-m.ch }
