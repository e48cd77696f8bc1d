package profiles

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

// memFS is a HostFS of files in memory, standing for the agent's host
// (local or over SFTP): the learner must read through it, not os.
type memFS struct {
	bridge.LocalFS
	files map[string]string
}

func (f memFS) ReadFile(_ context.Context, p string) ([]byte, error) {
	if s, ok := f.files[p]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

const (
	ocHome = "/home/remote"
	ocCwd  = "/srv/work"
)

var (
	ocUser    = path.Join(ocHome, ".config", "opencode", "opencode.json")
	ocProject = path.Join(ocCwd, "opencode.json")
)

// TestOpenCodePermissionsClassified: OpenCode's build agent asks only
// when the merged permissions (user's, then the project's, then the build
// agent's own) ask or deny both edits and commands; OpenCode's defaults,
// or an "allow" anywhere, leave it acting unasked.
func TestOpenCodePermissionsClassified(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		asks  bool
	}{
		{"no configuration", nil, false},
		{"user asks", map[string]string{ocUser: `{"permission":{"edit":"ask","bash":"ask","webfetch":"allow"}}`}, true},
		{"user asks for everything", map[string]string{ocUser: `{"permission":"ask"}`}, true},
		{"project asks, jsonc", map[string]string{path.Join(ocCwd, "opencode.jsonc"): "{\n // ask first\n \"permission\": {\"edit\": \"deny\", /* commands */ \"bash\": {\"*\": \"ask\"}}}"}, true},
		{"user asks, project allows commands", map[string]string{ocUser: `{"permission":{"edit":"ask","bash":"ask"}}`, ocProject: `{"permission":{"bash":"allow"}}`}, false},
		{"a command pattern allowed", map[string]string{ocUser: `{"permission":{"edit":"ask","bash":{"*":"ask","git status":"allow"}}}`}, false},
		{"only edits ask", map[string]string{ocUser: `{"permission":{"edit":"ask"}}`}, false},
		{"build agent's own permissions", map[string]string{ocUser: `{"permission":{"edit":"allow","bash":"allow"}}`, ocProject: `{"agent":{"build":{"permission":{"edit":"ask","bash":"ask"}}}}`}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table, err := OpenCode.Modes.Learn(context.Background(), memFS{files: c.files}, ocHome, ocCwd, nil)
			if err != nil {
				t.Fatal(err)
			}
			if asks := table != nil && len(table.Options) == 1 && len(table.Options[0].Safe) == 1 && table.Options[0].Safe[0] == "build"; asks != c.asks {
				t.Errorf("Learn = %+v: build asks %v, want %v", table, asks, c.asks)
			}
			if table != nil {
				if err := table.Check(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	_, err := OpenCode.Modes.Learn(context.Background(), memFS{files: map[string]string{ocProject: `{"permission":`}}, ocHome, ocCwd, nil)
	if err == nil {
		t.Error("Learn with a broken opencode.json: no error")
	}
}

// TestOpenCodeBuildPrompts: in host Build, OpenCode whose opencode.json
// asks is protected and prompted, its permission requests reaching the
// app; without one its build agent acts unasked and cannot be moved, so
// the app is asked for consent instead of every prompt being refused.
func TestOpenCodeBuildPrompts(t *testing.T) {
	modeOption := bridgetest.Raw(`[{"id":"mode","name":"Session Mode","category":"mode","type":"select","currentValue":"build","options":[{"value":"build","name":"build"},{"value":"plan","name":"plan"}]}]`)
	for _, asks := range []bool{true, false} {
		h, rec := bridgetest.NewHost(t, nil)
		rec.SetPermissionAnswer(func(r *bridge.PermissionRequest) { r.Allow() })
		in := fakebin.Install(t, t.TempDir(), "opencode", acptest.Script{
			NewSession: acptest.NewSessionScript{SessionIDs: []string{"o1"}, ConfigOptions: modeOption},
			Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Permission: &acptest.Permission{}}}}},
		}, "")
		files := map[string]string{}
		if asks {
			files[ocUser] = `{"permission":{"edit":"ask","bash":"ask"}}`
		}
		b, err := h.StartProfile(bridgetest.Context(t), OpenCode, bridge.LaunchOptions{Binary: in.Path, FS: memFS{files: files}, Home: ocHome}, bridge.Config{ID: "oc"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: ocCwd})
		if err != nil {
			t.Fatal(err)
		}
		st := s.Authority()
		_, err = s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go"))
		if asks {
			if st.State != bridge.AuthorityProtected || err != nil {
				t.Fatalf("asking opencode.json: Authority %+v, Prompt %v", st, err)
			}
			rec.WaitFor("the permission request shown to the app", func(ev bridge.Event) bool { return ev.Kind == bridge.KindPermission })
			continue
		}
		if st.State != bridge.AuthorityAgentAutonomous || !st.ConsentNeeded || st.Option != "mode" || st.Value != "build" || !errors.Is(err, bridge.ErrAgentAutonomous) {
			t.Fatalf("no opencode.json: Authority %+v, Prompt %v; want consent asked", st, err)
		}
	}
}
