package bridge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/fsroot"
)

// texts starts a host whose event loop prints the text the agent sends
// (with dir shown as DIR), and returns it with a function that shuts the
// host down and waits for the loop.
func texts(dir string) (*bridge.Host, func()) {
	host := bridge.NewHost(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range host.Events() {
			if ev.Kind == bridge.KindText {
				fmt.Println(strings.ReplaceAll(ev.Text, dir, "DIR"))
			}
		}
	}()
	return host, func() {
		host.Shutdown(context.Background())
		<-done
	}
}

// ExampleSession_SetPolicy switches a session to Ask mode: from then on the
// agent may only read; its permission request is cancelled without asking
// the app, and so is its write through the session's root.
func ExampleSession_SetPolicy() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	host, stop := texts(dir)
	defer stop()
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{ToolCall: []byte(`{"toolCallId":"t1","title":"rm -rf build"}`)}},
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "notes.txt"), Content: "hi"}},
	}}}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	files, _ := fsroot.NewLocal(dir, nil)
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: dir, Files: files, Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		log.Fatal(err)
	}
	session.SetPolicy(bridge.Policy{Mode: bridge.ModeAsk})
	if _, err := session.Prompt(ctx, acpclient.TextBlock("clean up")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// permission: cancelled
	// write DIR/notes.txt: error -32603 fsroot: write DIR/notes.txt: write refused: session is read-only (Ask mode)
}

// ExampleSession_SetGrants grants a session a directory outside its
// working directory: the session's root serves it from then on, and the
// agent is told with its next session.
func ExampleSession_SetGrants() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	work, shared := filepath.Join(dir, "work"), filepath.Join(dir, "shared")
	os.Mkdir(work, 0o755)
	os.Mkdir(shared, 0o755)
	os.WriteFile(filepath.Join(shared, "lib.txt"), []byte("shared code"), 0o644)
	host, stop := texts(dir)
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(shared, "lib.txt")}},
	}}}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	files, _ := fsroot.NewLocal(work, nil)
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: work, Files: files})
	if err != nil {
		log.Fatal(err)
	}
	session.Prompt(ctx, acpclient.TextBlock("read the library")) // refused: outside work
	if err := session.SetGrants(ctx, []string{shared}); err != nil {
		log.Fatal(err)
	}
	session.Prompt(ctx, acpclient.TextBlock("read the library")) // served
	grants := session.Grants()
	stop() // the event loop has printed everything
	fmt.Println(strings.ReplaceAll(strings.Join(grants, " "), dir, "DIR"))
	// Output:
	// read DIR/shared/lib.txt: error -32603 fsroot: read DIR/shared/lib.txt: path is outside the session's directories
	// read DIR/shared/lib.txt: shared code
	// DIR/shared
}

// ExampleParseWorkspace reads the workspaces an app may be given: a local
// directory, or a directory on an SSH host.
func ExampleParseWorkspace() {
	for _, s := range []string{"/home/me/project", "ssh://me@build-box:2222/srv/app"} {
		ws, err := bridge.ParseWorkspace(s)
		if err != nil {
			log.Fatal(err)
		}
		if ws.SSH == nil {
			fmt.Println("local", ws.Path)
		} else {
			fmt.Println("ssh", ws.SSH, ws.Path)
		}
	}
	_, err := bridge.ParseWorkspace("project")
	fmt.Println(err)
	// Output:
	// local /home/me/project
	// ssh me@build-box:2222 /srv/app
	// bridge: workspace "project": path must be absolute
}

// ExampleDoctor checks a configured provider without a session: where its
// program is, its version, whether it speaks ACP and is signed in, and what
// is missing. Here the program is not installed.
func ExampleDoctor() {
	gemini, _ := profiles.Lookup("gemini")
	reports := bridge.Doctor(context.Background(), bridge.DoctorCheck{
		Profile: gemini,
		Options: bridge.LaunchOptions{Resolver: &bridge.Resolver{Env: []string{"PATH=/nonexistent"}, NoLoginShell: true}},
	})
	for _, r := range reports {
		fmt.Println(r.Provider, "found:", r.Binary != nil, "ACP:", r.ACP)
		for _, m := range r.Missing {
			fmt.Println("missing:", m)
		}
	}
	// Output:
	// gemini found: false ACP: false
	// missing: install Gemini CLI (gemini) where programs are looked for (PATH, ~/.local/bin, npm's global folder), or give its path (LaunchOptions.Binary)
}
