package bridge

// The Bridge's side of the early buffer (early.go): holding and claiming
// updates under Bridge.mu, and purging the unclaimed ones on its clock.

// holdEarlyLocked buffers an update for a session id not (yet) known and
// returns the error to report when that dropped updates. b.mu is held.
func (b *Bridge) holdEarlyLocked(u *runUpdate) error {
	if b.closed {
		return nil // nothing will ever claim it
	}
	drop := b.early.add(u.Note, u.Raw, b.clock.Now())
	b.armEarlyTimerLocked()
	return b.early.report(drop)
}

// claimEarlyLocked returns the updates held for id. b.mu is held.
func (b *Bridge) claimEarlyLocked(id string) []runUpdate {
	held := b.early.claim(id)
	if b.early.order.Len() == 0 {
		b.stopEarlyTimerLocked()
	}
	return held
}

// openStarted marks a session/new or session/load as in flight, which
// suspends purging by age; call the returned func when it ended.
func (b *Bridge) openStarted() (ended func()) {
	b.mu.Lock()
	b.early.opening++
	b.stopEarlyTimerLocked()
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.early.opening--
		b.early.openEnded = b.clock.Now()
		b.armEarlyTimerLocked()
	}
}

// armEarlyTimerLocked makes sure a timer will purge the oldest held update
// when it expires. b.mu is held.
func (b *Bridge) armEarlyTimerLocked() {
	if b.earlyTimer != nil || b.closed {
		return
	}
	if wait, ok := b.early.nextExpiry(b.clock.Now()); ok {
		gen := b.earlyTimerGen
		b.earlyTimer = b.clock.AfterFunc(wait, func() { b.purgeEarly(gen) })
	}
}

// stopEarlyTimerLocked stops the purge timer; a call of it that already
// fired finds its generation outdated and does nothing. b.mu is held.
func (b *Bridge) stopEarlyTimerLocked() {
	if b.earlyTimer != nil {
		b.earlyTimer.Stop()
		b.earlyTimer = nil
	}
	b.earlyTimerGen++
}

// purgeEarly runs on the timer of generation gen: it drops what expired
// and re-arms for the rest.
func (b *Bridge) purgeEarly(gen uint64) {
	b.mu.Lock()
	if b.closed || gen != b.earlyTimerGen {
		b.mu.Unlock()
		return
	}
	b.earlyTimer = nil
	var drop earlyDrop
	b.early.purgeExpired(b.clock.Now(), &drop)
	b.early.count(drop)
	err := b.early.report(drop)
	b.armEarlyTimerLocked()
	b.mu.Unlock()
	if err != nil {
		b.reportEarlyDrop(err)
	}
}

func (b *Bridge) reportEarlyDrop(err error) {
	b.logger.Warn("bridge: dropped updates for an unknown session", "agent", b.cfg.ID, "err", err)
	b.emit(Event{Kind: KindError, Err: err})
}

// closeEarlyLocked stops the timer and frees what is held, logging the
// drops that were not reported. b.mu is held.
func (b *Bridge) closeEarlyLocked() {
	b.stopEarlyTimerLocked()
	b.early.clear()
	if e := b.early; e.droppedUpdates > 0 {
		b.logger.Warn("bridge: updates for unknown sessions dropped in all", "agent", b.cfg.ID,
			"updates", e.droppedUpdates, "bytes", e.droppedBytes)
	}
}
