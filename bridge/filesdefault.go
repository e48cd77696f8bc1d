package bridge

import (
	"fmt"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/fsroot"
)

// agentIsLocal reports whether the bridge's agent runs on this machine: its
// transport starts a program here (acpclient.ProgramTransport naming one).
// An SSH agent, or one behind a transport that does not say, is not.
func (b *Bridge) agentIsLocal() bool {
	pt, ok := b.cfg.Transport.(acpclient.ProgramTransport)
	if !ok {
		return false
	}
	path, _, _ := pt.Program()
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
