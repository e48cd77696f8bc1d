package profiles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// OpenCode's build agent follows OpenCode's permission settings, which
// allow edits and commands unless the user's opencode.json says "ask"
// (or "deny"). This file reads those settings where OpenCode reads them,
// on the agent's host, and makes build an asking value when they ask.

// openCodeConfigs are OpenCode's configuration files, the user's (under
// the home directory) before the project's (in the session's directory),
// which overrides them key by key.
func openCodeConfigs(home, cwd string) []string {
	var files []string
	if home != "" {
		dir := path.Join(home, ".config", "opencode")
		files = append(files, path.Join(dir, "config.json"), path.Join(dir, "opencode.json"), path.Join(dir, "opencode.jsonc"))
	}
	if cwd != "" {
		files = append(files, path.Join(cwd, "opencode.json"), path.Join(cwd, "opencode.jsonc"))
	}
	return files
}

// openCodeActing are the permissions whose "allow" lets the build agent
// change things unasked: edit (also write and patch) and bash.
var openCodeActing = []string{"edit", "bash"}

// openCodeConfig is what of an OpenCode configuration decides whether the
// build agent asks.
type openCodeConfig struct {
	Permission json.RawMessage `json:"permission"`
	Agent      map[string]struct {
		Permission json.RawMessage `json:"permission"`
	} `json:"agent"`
}

// permissions is a permission setting as a map: a single word applies to
// every permission ("*").
func permissions(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		return map[string]json.RawMessage{"*": raw}, nil
	}
	var m map[string]json.RawMessage
	err := json.Unmarshal(raw, &m)
	return m, err
}

// allows reports whether a permission's value lets something run unasked:
// "allow", or a map of command patterns with any "allow".
func allows(raw json.RawMessage) bool {
	var word string
	if json.Unmarshal(raw, &word) == nil {
		return word != "ask" && word != "deny"
	}
	var patterns map[string]string
	if json.Unmarshal(raw, &patterns) != nil {
		return true // a shape not known: not shown to ask
	}
	for _, v := range patterns {
		if v != "ask" && v != "deny" {
			return true
		}
	}
	return false
}

// learnOpenCode reads OpenCode's configuration files and returns the
// table with build as a value that asks when the merged permissions (the
// build agent's own over the global ones, the project's over the user's)
// ask before every edit and command, else the table as it is.
func learnOpenCode(ctx context.Context, fsys bridge.HostFS, home, cwd string, _ []acpclient.Mode) (*bridge.ModeTable, error) {
	merged := map[string]json.RawMessage{}
	var agent map[string]json.RawMessage
	for _, file := range openCodeConfigs(home, cwd) {
		data, err := fsys.ReadFile(ctx, file)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var cfg openCodeConfig
		if err := json.Unmarshal(stripJSONComments(data), &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		global, err := permissions(cfg.Permission)
		if err != nil {
			return nil, fmt.Errorf("%s: permission: %w", file, err)
		}
		for k, v := range global {
			merged[k] = v
		}
		own, err := permissions(cfg.Agent["build"].Permission)
		if err != nil {
			return nil, fmt.Errorf("%s: agent.build.permission: %w", file, err)
		}
		if agent == nil && own != nil {
			agent = map[string]json.RawMessage{}
		}
		for k, v := range own {
			agent[k] = v
		}
	}
	for k, v := range agent {
		merged[k] = v
	}
	for _, p := range openCodeActing {
		v, ok := merged[p]
		if !ok {
			v, ok = merged["*"]
		}
		if !ok || allows(v) {
			return nil, nil // OpenCode's default, or the user's choice: build acts unasked
		}
	}
	return &bridge.ModeTable{
		Options: []bridge.OptionRule{{ID: "mode", Plan: "plan", Safe: []string{"build"}}},
		Source:  "OpenCode permissions (opencode.json) ask before edits and commands",
	}, nil
}

// stripJSONComments blanks // and /* */ comments outside strings, for
// OpenCode's .jsonc files.
func stripJSONComments(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			if c == '"' && !escaped {
				inString = false
			}
			escaped = !escaped && c == '\\'
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			c = '\n'
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			i += 2
			for i+1 < len(data) && (data[i] != '*' || data[i+1] != '/') {
				i++
			}
			i++
			c = ' '
		}
		out = append(out, c)
	}
	return out
}
