package bridge

import (
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestErrorsSayEachThingOnce: the bridge adds its id to an acpclient call's
// error and nothing acpclient already said (the method), and a sentinel it
// wraps under its own prefix does not repeat "bridge:"; errors.Is and As
// still see through.
func TestErrorsSayEachThingOnce(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	for _, tt := range []struct {
		name, method string
		script       acptest.Script
		open         bool // the failure is in OpenSession, not Start
		is           error
	}{
		{"initialize", "initialize", acptest.Script{Initialize: acptest.InitializeScript{Error: &acptest.Error{Code: -32603, Message: "broken"}}}, false, nil},
		{"session-new", "session/new", acptest.Script{Methods: map[string]acptest.Reply{"session/new": {Error: &acptest.Error{Code: -32603, Message: "broken"}}}}, true, nil},
		{"no-sign-in", "session/new", acptest.Script{NewSession: acptest.NewSessionScript{RequireAuth: "*"}}, true, ErrAuthRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := h.Start(ctxT(t), agentConfig(t, "x-"+strings.ToUpper(tt.name), tt.script))
			if tt.open {
				if err != nil {
					t.Fatal(err)
				}
				_, err = b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
			}
			if err == nil {
				t.Fatal("no error")
			}
			text := err.Error()
			if !strings.HasPrefix(text, "bridge x-"+strings.ToUpper(tt.name)+": ") || strings.Count(text, tt.method+":") != 1 || strings.Count(text, "bridge") != 1 {
				t.Errorf("error %q: want the bridge id once, then %s named once", text, tt.method)
			}
			var ce *acpclient.Error
			if !errors.As(err, &ce) {
				t.Errorf("error %q does not wrap the agent's *acpclient.Error", text)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", text, tt.is)
			}
		})
	}
}
