package fsroot_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/sshconn"
)

// ExampleNewLocal confines a root to a working directory plus the
// directories granted to it; grants can change while the root is in use.
func ExampleNewLocal() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	work, shared := filepath.Join(dir, "work"), filepath.Join(dir, "shared")
	os.Mkdir(work, 0o755)
	os.Mkdir(shared, 0o755)
	os.WriteFile(filepath.Join(shared, "lib.txt"), []byte("shared code\n"), 0o644)

	root, err := fsroot.NewLocal(work, &fsroot.Options{Grants: []string{shared}})
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	text, err := root.ReadTextFile(ctx, filepath.Join(shared, "lib.txt"), 0, 0)
	fmt.Printf("%q %v\n", text, err)
	root.SetGrants(ctx, nil)
	_, err = root.ReadTextFile(ctx, filepath.Join(shared, "lib.txt"), 0, 0)
	fmt.Println(errors.Is(err, fsroot.ErrOutsideRoot))
	// Output:
	// "shared code\n" <nil>
	// true
}

// ExampleNewSFTP serves a remote directory over an *ssh.Client the app
// already has (here from sshconn.Dial; any x/crypto/ssh client works).
// (It needs an SSH host, so it is compiled, not run.)
func ExampleNewSFTP() {
	ctx := context.Background()
	dest, _ := sshconn.Parse("dev@build.example.com")
	client, err := sshconn.Dial(ctx, dest, sshconn.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	root, err := fsroot.NewSFTP(ctx, client, "/home/dev/project", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	text, err := root.ReadTextFile(ctx, "/home/dev/project/README.md", 1, 20)
	fmt.Println(text, err)
}
