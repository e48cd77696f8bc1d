package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrNoGit is the error of a Store whose host has no git.
var ErrNoGit = errors.New("checkpoint: git is not installed on the workspace's host")

// Defaults of Options' limits.
const (
	defaultMaxFileSize = 8 << 20
	defaultMaxFiles    = 200_000
)

// Options say which workspace a Store records, where, and within which
// limits. The zero value of each optional field is a useful default.
type Options struct {
	// Workspace is the absolute path of the directory to record, on the
	// runner's host.
	Workspace string
	// Dir is the absolute path of the Store's own git directory on the
	// same host, outside Workspace; it is made when missing. "" means
	// $XDG_CACHE_HOME/acphost/checkpoints/HASH (~/.cache/… without it),
	// HASH naming Workspace and Name. One Store uses a Dir at a time.
	Dir string
	// Name tells apart the Stores of one workspace in the default Dir (a
	// session key, say), so that they do not share a git directory.
	Name string
	// Runner runs git where the files are; nil means Local.
	Runner Runner
	// MaxFileSize is the size in bytes past which a file is left out of a
	// checkpoint (and named in Checkpoint.Skipped); 0 means 8 MiB.
	MaxFileSize int64
	// MaxFiles caps the files a checkpoint holds; new files past it are
	// left out and named. 0 means 200,000.
	MaxFiles int
	// MaxWatchedDirs caps the directories Watch follows on this machine
	// (an inotify watch each, a kernel resource); past it the watch
	// ends, saying so. 0 means 8192. A negative value turns Watch off,
	// and with it a session's live reports; the checkpoints still work.
	MaxWatchedDirs int
}

// Store keeps the checkpoints of one workspace in a git directory of its
// own. Its methods may be called from several goroutines; they run one at
// a time.
type Store struct {
	opt      Options
	env      []string // the git environment: the private dir, index and config
	mu       sync.Mutex
	files    int // entries in the private index, once counted
	counted  bool
	restores int        // restores made, to name their checkpoints
	last     string     // a checkpoint whose tree the index holds, if known
	head     string     // the last checkpoint (HEAD), once this Store has recorded one
	diff     cachedDiff // the changes the last checkpoint's commit listed
	// ownRefs: this process writes the refs itself (setRefs), the git
	// directory being on this machine, in git's loose-file ref storage.
	ownRefs bool
	quiet   quietMark // where the last walk left the running watch (settle.go)
	walks   int       // walks made, which the tests of settle.go count

	watchMu sync.Mutex
	settle  *settle       // the running watch the snapshots ask, if any
	walking chan struct{} // closed when the running walk ends; nil when none runs
}

// cachedDiff is diff-tree's output for the changes between two
// checkpoints, listed when the second was recorded.
type cachedDiff struct {
	from, to string
	raw      []byte
}

// Open prepares the Store's git directory and checks that git runs on the
// workspace's host (ErrNoGit when it does not). It changes nothing in the
// workspace.
func Open(ctx context.Context, opt Options) (*Store, error) {
	if opt.Runner == nil {
		opt.Runner = Local{}
	}
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = defaultMaxFileSize
	}
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = defaultMaxFiles
	}
	if !path.IsAbs(opt.Workspace) {
		return nil, fmt.Errorf("checkpoint: workspace %q is not an absolute path", opt.Workspace)
	}
	opt.Workspace = path.Clean(opt.Workspace)
	if opt.Dir != "" {
		if !path.IsAbs(opt.Dir) {
			return nil, fmt.Errorf("checkpoint: git directory %q is not an absolute path", opt.Dir)
		}
		opt.Dir = path.Clean(opt.Dir)
		if err := outsideWorkspace(opt); err != nil {
			return nil, err
		}
	}
	s := &Store{opt: opt}
	if err := s.init(ctx); err != nil {
		return nil, err
	}
	s.env = gitEnv(s.opt)
	return s, nil
}

// outsideWorkspace refuses a git directory in the workspace: the
// checkpoints would record themselves, and the workspace is only read.
func outsideWorkspace(opt Options) error {
	if opt.Dir == opt.Workspace || strings.HasPrefix(opt.Dir, opt.Workspace+"/") {
		return fmt.Errorf("checkpoint: git directory %s is inside the workspace %s", opt.Dir, opt.Workspace)
	}
	return nil
}

// initScript prepares the git directory in one round trip: $1, or when
// $1 is "" the directory $2 under the host's cache directory
// (XDG_CACHE_HOME, else ~/.cache). It prints the directory, then "new"
// when it made the git directory; it exits 127 when git is not
// installed. A git directory with a HEAD is kept as it is. git init
// copies no templates: no sample hooks, no description. The attributes
// file outranks the workspace's .gitattributes: no end-of-line
// conversion, filter or keyword expansion between the workspace and the
// checkpoint, so a restore is byte for byte.
const initScript = `d=$1
if [ -z "$d" ]; then d=${XDG_CACHE_HOME:-$HOME/.cache}/$2; fi
printf '%s\n' "$d"
case $d in /*) ;; *) exit 0 ;; esac
command -v git >/dev/null || exit 127
if [ ! -f "$d/HEAD" ]; then
	mkdir -p "$d/info" "$d/refs/acphost" && HOME=$d XDG_CONFIG_HOME=$d git init -q --bare --template= "$d" || exit
	echo new
fi
printf '%s\n' '` + gitAttributes + `' > "$d/info/attributes"`

// gitAttributes is the git directory's attributes file (see initScript).
const gitAttributes = "* -text -ident -filter !eol !working-tree-encoding"

// init makes the git directory, or finds the one a Store had before,
// settling Options.Dir (its default is under the host's cache directory:
// see initScript). A new git directory has no files to count.
func (s *Store) init(ctx context.Context) error {
	suffix := path.Join("acphost", "checkpoints", hashName(s.opt.Workspace+"\x00"+s.opt.Name))
	if _, local := s.opt.Runner.(Local); local {
		return s.initLocal(suffix)
	}
	// The host's own HOME finds its cache directory; git gets the git
	// directory as its HOME in the script.
	env := slices.DeleteFunc(baseEnv(""), func(v string) bool {
		return strings.HasPrefix(v, "HOME=") || strings.HasPrefix(v, "XDG_CONFIG_HOME=")
	})
	out, err := s.opt.Runner.Run(ctx, []string{"sh", "-c", initScript, "sh", s.opt.Dir, suffix}, env, nil)
	dir, made, _ := strings.Cut(string(out), "\n")
	switch {
	case err != nil && s.opt.Dir == "" && dir == "":
		return fmt.Errorf("checkpoint: finding the cache directory: %w", err)
	case err != nil:
		return s.fail("preparing "+dir, err)
	case !path.IsAbs(dir):
		return fmt.Errorf("checkpoint: the host's cache directory %q is not absolute; set Options.Dir", strings.TrimSuffix(dir, "/"+suffix))
	}
	if s.opt.Dir == "" {
		s.opt.Dir = path.Clean(dir)
		if err := outsideWorkspace(s.opt); err != nil {
			return err
		}
	}
	if strings.TrimSpace(made) == "new" {
		s.files, s.counted = 0, true
	}
	return nil
}

// initLocal is init on this machine, in this process: initScript's steps
// without a process (the script took three, some 10 ms of a session's
// first checkpoint, and git init alone some 6 ms).
func (s *Store) initLocal(suffix string) error {
	if s.opt.Dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home := os.Getenv("HOME")
			if home == "" {
				return errors.New("checkpoint: finding the cache directory: neither XDG_CACHE_HOME nor HOME is set; set Options.Dir")
			}
			cache = filepath.Join(home, ".cache")
		}
		if !filepath.IsAbs(cache) {
			return fmt.Errorf("checkpoint: the host's cache directory %q is not absolute; set Options.Dir", cache)
		}
		s.opt.Dir = filepath.Join(cache, suffix)
		if err := outsideWorkspace(s.opt); err != nil {
			return err
		}
	}
	d := s.opt.Dir
	if _, err := exec.LookPath("git"); err != nil {
		return s.fail("preparing "+d, err)
	}
	if _, err := os.Stat(filepath.Join(d, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if err := makeGitDir(d); err != nil {
			return fmt.Errorf("checkpoint: preparing %s: %w", d, err)
		}
		s.files, s.counted = 0, true
	}
	err := os.MkdirAll(filepath.Join(d, "info"), 0o777)
	if err == nil {
		err = os.WriteFile(filepath.Join(d, "info", "attributes"), []byte(gitAttributes+"\n"), 0o666)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: preparing %s: %w", d, err)
	}
	_, err = os.Stat(filepath.Join(d, "reftable"))
	s.ownRefs = errors.Is(err, fs.ErrNotExist)
	return nil
}

// makeGitDir makes d what git init --bare --template= makes (see
// gitrepository-layout(5)): the object and ref directories, a config of
// repository format 0, whose loose refs every git reads, and HEAD on an
// unborn branch, written last: a directory with a HEAD is a git directory
// (initLocal keeps it), so one left half made is made again.
func makeGitDir(d string) error {
	for _, sub := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o777); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(d, "config"), []byte(gitDirConfig), 0o666); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d, "HEAD"), []byte("ref: refs/heads/master\n"), 0o666)
}

// gitDirConfig is the config git init writes into a bare git directory
// when no configuration asks for more.
const gitDirConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"

// baseEnv keeps git away from every configuration but the command line's,
// and makes its messages and paths plain.
func baseEnv(dir string) []string {
	return []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C",
	}
}

// gitEnv is the environment of every git command of a Store: its own
// directory and index, the workspace as work tree.
func gitEnv(opt Options) []string {
	return append(baseEnv(opt.Dir),
		"GIT_DIR="+opt.Dir, "GIT_WORK_TREE="+opt.Workspace, "GIT_INDEX_FILE="+opt.Dir+"/index",
		"GIT_AUTHOR_NAME=acphost", "GIT_AUTHOR_EMAIL=acphost@localhost",
		"GIT_COMMITTER_NAME=acphost", "GIT_COMMITTER_EMAIL=acphost@localhost")
}

// gitArgs prefixes a git command with the settings that keep the user's
// hooks, filters and monitors from running and the bytes unconverted. The
// private index keeps an untracked cache (directory times), so a walk
// reads only the directories that changed, and is split (a shared part
// and the recent changes, in the compact version 4), so the few git
// commands that record a checkpoint each read and write less.
func (s *Store) gitArgs(args ...string) []string {
	return append([]string{"git",
		"-c", "core.bare=false", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
		"-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "core.symlinks=true",
		"-c", "core.filemode=true", "-c", "core.quotepath=false", "-c", "gc.auto=0",
		"-c", "core.untrackedCache=true", "-c", "safe.directory=*", "-c", "index.version=4", "-c", "core.splitIndex=true", "-c", "splitIndex.sharedIndexExpire=now",
		"-c", "core.excludesFile=" + s.opt.Workspace + "/.git/info/exclude",
	}, args...)
}

// git runs one git command in the Store's environment.
func (s *Store) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	out, err := s.opt.Runner.Run(ctx, s.gitArgs(args...), s.env, stdin)
	if err != nil {
		return out, s.fail("git "+args[0], err)
	}
	return out, nil
}

// fail names what failed, and says ErrNoGit when git is missing.
func (s *Store) fail(what string, err error) error {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%w (%s in %s): %v", ErrNoGit, what, s.opt.Workspace, err)
	}
	return fmt.Errorf("checkpoint: %s in %s: %w", what, s.opt.Workspace, err)
}
