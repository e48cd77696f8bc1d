package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// Starting a Host's bridges (from a Config or a Profile), removing one,
// and ending them all.

// Start starts an agent and returns its Bridge. The agent is initialized;
// open sessions with Bridge.OpenSession. It is Add and the agent's start at
// once: a failed start is Start's error, and adds nothing.
func (h *Host) Start(ctx context.Context, cfg Config) (*Bridge, error) {
	b, err := h.Add(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := b.ensure(ctx); err != nil {
		h.mu.Lock()
		delete(h.all, b.cfg.ID)
		h.mu.Unlock()
		return nil, err
	}
	return b, nil
}

// Add adds an agent to the Host without starting it and returns its
// Bridge. The agent starts with the first call that needs its process,
// Bridge.OpenSession most often, as a Bridge whose agent died starts it
// again; that call reports a failed start (ErrAgentNotFound, a failed
// initialize), and the Bridge stays, to try again. So an app can add
// every agent a user may pick and start only the one picked; and a new
// session opened on an agent not yet started records its workspace's
// first checkpoint while the agent starts (see SessionConfig.Checkpoints),
// which a Start would have made it wait for.
func (h *Host) Add(cfg Config) (*Bridge, error) {
	if cfg.Transport == nil {
		return nil, fmt.Errorf("bridge: the agent's Config has no Transport")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return nil, ErrClosed
	}
	if cfg.ID == "" {
		cfg.ID = fmt.Sprintf("agent-%d", h.nextID.Add(1))
	}
	if _, dup := h.all[cfg.ID]; dup {
		return nil, fmt.Errorf("bridge: an agent with id %q already exists", cfg.ID)
	}
	b := newBridge(h, cfg)
	h.all[cfg.ID] = b
	return b, nil
}

// Remove closes a bridge and forgets it.
func (h *Host) Remove(id string) error {
	h.mu.Lock()
	b := h.all[id]
	delete(h.all, id)
	h.mu.Unlock()
	if b == nil {
		return fmt.Errorf("bridge: no agent %q", id)
	}
	return b.Close()
}

// Shutdown closes every bridge (ending their processes) and then closes the
// event stream once the remaining events are delivered. If ctx ends first,
// undelivered events are dropped and the stream closed at once.
func (h *Host) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	bridges := make([]*Bridge, 0, len(h.all))
	for _, b := range h.all {
		bridges = append(bridges, b)
	}
	h.mu.Unlock()
	closed := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, b := range bridges {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.Close()
			}()
		}
		wg.Wait()
		h.events.close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		h.events.abandon()
		<-closed
		return ctx.Err()
	}
	select {
	case <-h.events.done():
		return nil
	case <-ctx.Done():
		h.events.abandon()
		return ctx.Err()
	}
}

// Close ends every agent and closes the event stream without waiting for
// the consumer: events not yet read are dropped. Use Shutdown to deliver
// them first.
func (h *Host) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.Shutdown(ctx)
	if err == context.Canceled {
		return nil
	}
	return err
}

// StartProfile resolves and starts the profile's agent with o and returns
// its Bridge. cfg supplies everything else (ID, logger, clock, sign-in
// hook); its Transport is replaced and its Provider, when nil, is the
// profile's. When the agent exits before answering initialize and the
// profile knows older builds' arguments, it is started once more with them.
func (h *Host) StartProfile(ctx context.Context, p *Profile, o LaunchOptions, cfg Config) (*Bridge, error) {
	if o.Clock == nil {
		o.Clock = cfg.Clock
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	b, err := h.startProfile(ctx, p, o, cfg)
	var exit *acpclient.ExitError
	if err != nil && p.LegacyArgs != nil && !o.Legacy && errors.As(err, &exit) {
		o.Legacy = true
		if lb, lerr := h.startProfile(ctx, p, o, cfg); lerr == nil {
			return lb, nil
		}
	}
	return b, err
}

func (h *Host) startProfile(ctx context.Context, p *Profile, o LaunchOptions, cfg Config) (*Bridge, error) {
	if o.SSH != nil && o.SSH.Hosts != nil {
		if o.FS == nil {
			o.FS = o.SSH.Hosts.hostFS(o.SSH.Target)
		}
		if o.Home == "" {
			// The SFTP server starts in the login directory.
			if home, err := o.SSH.Hosts.remoteHome(ctx, o.SSH.Target); err == nil {
				o.Home = home
			}
		}
	}
	tr, path, res, err := p.transport(ctx, o)
	if err != nil {
		return nil, err
	}
	l := &Launch{Profile: p, opts: o, res: res}
	cfg.Transport = &profileTransport{launch: l, inner: tr, path: path}
	if cfg.AgentModes == nil {
		cfg.AgentModes = p.Modes
	}
	if cfg.Provider == nil {
		cfg.Provider = &Provider{Name: p.Name}
		if p.NewProvider != nil {
			cfg.Provider = p.NewProvider(l)
		}
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("bridge: starting agent", "profile", p.Name, "binary", res.Path, "found", res.Source)
	}
	b, err := h.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("bridge: %s (%s, found in %s): %w", p.Name, res.Path, res.Source, err)
	}
	return b, nil
}
