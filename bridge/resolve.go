package bridge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// Where a Resolver found a binary (Resolution.Source).
const (
	FoundOverride   = "override"    // the app's explicit path
	FoundPATH       = "PATH"        // the environment's PATH
	FoundLoginShell = "login-shell" // the PATH of the user's login shell
	FoundNPM        = "npm-global"  // an npm (or nvm, volta, pnpm, bun) global bin
	FoundLocalBin   = "local-bin"   // ~/.local/bin
	FoundHomebrew   = "homebrew"    // a Homebrew bin
)

// defaultShellTimeout bounds how long a Resolver waits for the login shell
// to print its PATH (slow rc files must not hang an app's start).
const defaultShellTimeout = 3 * time.Second

// Resolver finds an agent's binary the way a GUI app must: an app started
// from a dock or a desktop file has a minimal PATH, so it looks in the
// user's login-shell PATH and the usual install places too. It only finds
// the program; the agent is then executed directly, never through a shell.
// The zero value searches this process's environment.
type Resolver struct {
	// Env is the environment whose PATH, HOME and SHELL are used (nil:
	// this process's).
	Env []string
	// Shell is the login shell asked for its PATH (default: SHELL of Env).
	// NoLoginShell skips that step.
	Shell        string
	NoLoginShell bool
	// ShellTimeout bounds the login shell (default 3 seconds).
	ShellTimeout time.Duration
	// HomebrewPrefixes are Homebrew's install prefixes (default
	// /opt/homebrew, /usr/local and /home/linuxbrew/.linuxbrew).
	HomebrewPrefixes []string

	once      sync.Once
	shellPath string
	shellErr  error
}

// Resolution says where a binary was found.
type Resolution struct {
	// Path is the absolute path of the program.
	Path string `json:"path"`
	// Name is the program name that matched.
	Name string `json:"name"`
	// Source is one of the Found* constants.
	Source string `json:"source"`
	// Searched lists the places looked at, in order, for error messages
	// and doctor reports.
	Searched []string `json:"searched,omitempty"`
}

// Resolve returns the first match, in this order: override (when not
// empty), then each name in the environment's PATH, the login shell's PATH,
// npm global bins, ~/.local/bin and Homebrew; a folder listed in several of
// them is looked at once. The error wraps acpclient.ErrAgentNotFound and
// names the programs and each place searched, once.
func (r *Resolver) Resolve(ctx context.Context, override string, names ...string) (Resolution, error) {
	var res Resolution
	if override != "" {
		res.Searched = append(res.Searched, override)
		if isExecutable(override) {
			abs, _ := filepath.Abs(override)
			res.Path, res.Name, res.Source = abs, filepath.Base(override), FoundOverride
			return res, nil
		}
		return res, fmt.Errorf("%w: %s is not an executable file (path override)", acpclient.ErrAgentNotFound, override)
	}
	if len(names) == 0 {
		return res, fmt.Errorf("%w: no program name given", acpclient.ErrAgentNotFound)
	}
	type place struct {
		source string
		dirs   func() []string
	}
	home := r.getenv("HOME")
	places := []place{
		{FoundPATH, func() []string { return filepath.SplitList(r.getenv("PATH")) }},
		{FoundLoginShell, func() []string { return filepath.SplitList(r.loginShellPATH(ctx)) }},
		{FoundNPM, func() []string { return npmDirs(home, r.getenv("NPM_CONFIG_PREFIX")) }},
		{FoundLocalBin, func() []string {
			if home == "" {
				return nil
			}
			return []string{filepath.Join(home, ".local", "bin")}
		}},
		{FoundHomebrew, func() []string {
			prefixes := r.HomebrewPrefixes
			if prefixes == nil {
				prefixes = []string{"/opt/homebrew", "/usr/local", "/home/linuxbrew/.linuxbrew"}
			}
			var dirs []string
			for _, p := range prefixes {
				dirs = append(dirs, filepath.Join(p, "bin"))
			}
			return dirs
		}},
	}
	seen := map[string]bool{}
	for _, pl := range places {
		for _, dir := range pl.dirs() {
			dir = filepath.Clean(dir)
			if dir == "." || !filepath.IsAbs(dir) || seen[dir] {
				continue // a relative PATH entry would depend on our cwd; a repeated one was looked at
			}
			seen[dir] = true
			res.Searched = append(res.Searched, pl.source+":"+dir)
			for _, name := range names {
				candidate := filepath.Join(dir, name)
				if isExecutable(candidate) {
					res.Path, res.Name, res.Source = candidate, name, pl.source
					return res, nil
				}
			}
		}
	}
	return res, r.notFound(names, res.Searched)
}

// notFound is the error of a search that found none of names: the names,
// then each place searched once, grouped by source in the PATH list form
// ("PATH:/usr/bin:/bin login-shell:/opt/bin …"), and why the login shell
// did not help when it failed.
func (r *Resolver) notFound(names, searched []string) error {
	var b strings.Builder
	source := ""
	for _, s := range searched {
		src, dir, _ := strings.Cut(s, ":")
		switch {
		case src != source && b.Len() > 0:
			b.WriteString(" " + src + ":" + dir)
		case src != source:
			b.WriteString(src + ":" + dir)
		default:
			b.WriteString(string(filepath.ListSeparator) + dir)
		}
		source = src
	}
	why := ""
	if r.shellErr != nil {
		why = fmt.Sprintf(" (login shell: %v)", r.shellErr)
	}
	return fmt.Errorf("%w: %s; searched %s%s", acpclient.ErrAgentNotFound, strings.Join(names, " or "), b.String(), why)
}

func (r *Resolver) getenv(name string) string {
	env := r.Env
	if env == nil {
		env = environ()
	}
	val := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			val = v
		}
	}
	return val
}

// shellPathMarker frames the PATH in the login shell's output, which rc
// files may clutter with banners.
const shellPathMarker = "__ACPHOST_PATH__"

// loginShellPATH asks the user's login shell for its PATH, once.
func (r *Resolver) loginShellPATH(ctx context.Context) string {
	if r.NoLoginShell {
		return ""
	}
	r.once.Do(func() {
		shell := r.Shell
		if shell == "" {
			shell = r.getenv("SHELL")
		}
		if shell == "" {
			r.shellErr = fmt.Errorf("no SHELL set")
			return
		}
		timeout := r.ShellTimeout
		if timeout <= 0 {
			timeout = defaultShellTimeout
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// A helper command: what the rc files start ends with it, and with us.
		cmd := acpclient.Command(shell, "-l", "-i", "-c", `printf '`+shellPathMarker+`%s`+shellPathMarker+`' "$PATH"`)
		cmd.Env = r.Env
		cmd.OwnSession = true // else, in an app run from a terminal, job control stops it
		out, err := cmd.Output(ctx)
		if ctx.Err() != nil {
			r.shellErr = fmt.Errorf("%s did not print its PATH within %v", shell, timeout)
			return
		}
		_, rest, ok := bytes.Cut(out, []byte(shellPathMarker))
		path, _, ok2 := bytes.Cut(rest, []byte(shellPathMarker))
		if !ok || !ok2 {
			r.shellErr = fmt.Errorf("%s printed no PATH (%v)", shell, err)
			return
		}
		r.shellPath = string(path)
	})
	return r.shellPath
}

// npmDirs are the global bin directories of npm and the node version
// managers people install agents with.
func npmDirs(home, prefix string) []string {
	var dirs []string
	if prefix != "" {
		dirs = append(dirs, filepath.Join(prefix, "bin"))
	}
	if home == "" {
		return dirs
	}
	dirs = append(dirs, filepath.Join(home, ".npm-global", "bin"))
	nvm, _ := filepath.Glob(filepath.Join(home, ".nvm", "versions", "node", "*", "bin"))
	slices.Reverse(nvm) // newest first, roughly
	dirs = append(dirs, nvm...)
	return append(dirs,
		filepath.Join(home, ".volta", "bin"),
		filepath.Join(home, ".local", "share", "pnpm"),
		filepath.Join(home, ".bun", "bin"))
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// environ is this process's environment; a variable so tests of the
// resolver do not depend on the machine.
var environ = os.Environ
