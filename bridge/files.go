package bridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/fsroot"
)

// applyWriteGateLocked hands the policy's write rule to Files that have a
// gate of their own. Called with s.mu held, so gate changes apply in policy
// order.
func (f *sessionFiles) applyWriteGateLocked() {
	s := f.s
	if g, ok := s.cfg.Files.(ReadOnlySetter); ok {
		why := s.policy.writeRefusal()
		g.SetReadOnly(why != "", why)
	}
}

// SetGrants replaces the session's external directories, also while a turn
// runs. The session's Files (when a GrantSetter) take the new list first:
// from then on a removed directory is refused and a new one served, and a
// list they refuse (a directory that does not exist) changes nothing. Then
// an agent with a vendor method for it (Provider.SetExternalDirectories) is
// told the complete list; if that fails the session becomes unusable, as
// carrying on would leave the agent's own tools with stale grants. A
// standard ACP agent has no way to be told mid-session: it gets the list
// with its next session/new, load or resume (after a restart), and until
// then only its fs/* calls follow the new list. The list is saved with the
// session.
func (s *Session) SetGrants(ctx context.Context, dirs []string) error {
	if err := s.closedErr(); err != nil {
		return err
	}
	dirs = slices.Clone(dirs)
	if dirs == nil {
		dirs = []string{}
	}
	s.native.mu.Lock()
	defer s.native.mu.Unlock()
	if g, ok := s.cfg.Files.(GrantSetter); ok {
		if err := g.SetGrants(ctx, dirs); err != nil {
			return fmt.Errorf("bridge %s: granting %q: %w", s.b.cfg.ID, dirs, err)
		}
	}
	s.mu.Lock()
	s.grants = dirs
	s.mu.Unlock()
	if err := s.files.tellGrants(ctx); err != nil {
		return err
	}
	s.rec.save()
	return nil
}

// tellGrants sends the grant list to the live process through the vendor
// method, if the agent has one. A session whose process died is told on
// its next attach instead. Called with s.native.mu held.
func (f *sessionFiles) tellGrants(ctx context.Context) error {
	s := f.s
	hook := s.b.provider.SetExternalDirectories
	live := s.native.conn != nil && s.native.conn == s.b.liveConn()
	if hook == nil || !live {
		return nil
	}
	if err := hook(ctx, s.native.conn, s.id, s.Grants()); err != nil {
		err = fmt.Errorf("%w: synchronising external directories: %v", ErrUnusable, err)
		s.native.markUnusable(err)
		return err
	}
	return nil
}

// readTextFile serves fs/read_text_file from the session's Files.
func (f *sessionFiles) readTextFile(ctx context.Context, req *acpclient.ReadTextFileRequest) (*acpclient.ReadTextFileResponse, error) {
	s := f.s
	s.activity()
	if s.cfg.Files == nil {
		return nil, f.noRootRefusal("reading", req.Path)
	}
	line, limit := 0, 0
	if req.Line != nil {
		line = *req.Line
	}
	if req.Limit != nil {
		limit = *req.Limit
	}
	content, err := s.cfg.Files.ReadTextFile(ctx, req.Path, line, limit)
	if err != nil {
		return nil, fileError("reading", req.Path, err)
	}
	return &acpclient.ReadTextFileResponse{Content: content}, nil
}

// writeTextFile serves fs/write_text_file. The policy's write rule is
// enforced once: by the Files' own gate when they have one (kept in step by
// applyWriteGateLocked), else here.
func (f *sessionFiles) writeTextFile(ctx context.Context, req *acpclient.WriteTextFileRequest) error {
	s := f.s
	s.activity()
	if _, gated := s.cfg.Files.(ReadOnlySetter); !gated {
		if why := s.Policy().writeRefusal(); why != "" {
			return acpclient.NewError(acpclient.CodeInternalError, "writing %s refused: the session is read-only (%s)", req.Path, why)
		}
	}
	if s.cfg.Files == nil {
		return f.noRootRefusal("writing", req.Path)
	}
	before := s.ckpt.beforeWrite(ctx, req.Path)
	if err := s.cfg.Files.WriteTextFile(ctx, req.Path, req.Content); err != nil {
		return fileError("writing", req.Path, err)
	}
	s.ckpt.wrote(req.Path, req.Content, before)
	return nil
}

// fileError turns a Files error into the ACP error the agent sees.
func fileError(op, path string, err error) error {
	var e *acpclient.Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	if !strings.Contains(msg, path) {
		// An error naming the path says what was done to it already
		// (fsroot's "fsroot: read PATH: …"); others get both.
		msg = op + " " + path + ": " + msg
	}
	if errors.Is(err, fs.ErrNotExist) {
		return acpclient.NewError(acpclient.CodeResourceNotFound, "%s", msg)
	}
	return acpclient.NewError(acpclient.CodeInternalError, "%s", msg)
}

// agentIsLocal reports whether the bridge's agent runs on this machine: its
// transport starts a program here (acpclient.ProgramTransport naming one).
// An SSH agent, or one behind a transport that does not say, is not.
func (b *Bridge) agentIsLocal() bool {
	path, _, _ := b.program()
	return path != ""
}

// defaultFiles gives a session of a local agent without Files a root
// confined to its Cwd (fsroot.NewLocal), which the session owns and closes.
// Without it every file call of the agent would be refused. A Cwd that
// cannot be a root (it does not exist) leaves the session without one,
// and the first refused file call says why.
func (f *sessionFiles) defaultFiles() {
	s := f.s
	if s.cfg.Files != nil || s.cfg.Cwd == "" || !s.b.agentIsLocal() {
		return
	}
	root, err := fsroot.NewLocal(s.cfg.Cwd, nil)
	if err != nil {
		f.noRootWhy = fmt.Sprintf("its Cwd cannot be one: %v", err)
		return
	}
	s.cfg.Files, f.own = root, root
}

// closeOwnFiles closes the root defaultFiles made, if any.
func (f *sessionFiles) closeOwnFiles() {
	if f.own != nil {
		f.own.Close()
	}
}

// noRootRefusal reports, once per session, that a file call of the agent
// was refused because the session has no Files: otherwise the app would
// not learn why the agent cannot read or write anything.
func (f *sessionFiles) noRootRefusal(op, path string) error {
	s := f.s
	if f.noRootReported.CompareAndSwap(false, true) {
		why := f.noRootWhy
		if why == "" {
			why = "set SessionConfig.Files; only local agents get one at their Cwd by default"
		}
		s.emit(Event{Kind: KindError, Err: fmt.Errorf("the agent's file %s of %s was refused: the session has no file root (%s)", op, path, why)})
	}
	return acpclient.NewError(acpclient.CodeInternalError, "%s %s refused: the session has no file root", op, path)
}
