package fsroot_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/sshconn"
)

func ExampleLocal() {
	ctx := context.Background()
	cwd, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(cwd)

	root, err := fsroot.NewLocal(cwd, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer root.Close()

	// fs/write_text_file, then fs/read_text_file from line 2, one line.
	notes := filepath.Join(cwd, "notes.txt")
	if err := root.WriteTextFile(ctx, notes, "one\ntwo\nthree\n"); err != nil {
		fmt.Println(err)
		return
	}
	text, _ := root.ReadTextFile(ctx, notes, 2, 1)
	fmt.Printf("%q\n", text)

	// A missing file maps to ACP error -32002.
	_, err = root.ReadTextFile(ctx, filepath.Join(cwd, "missing.txt"), 0, 0)
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	// Paths outside the session are refused.
	_, err = root.ReadTextFile(ctx, "/etc/passwd", 0, 0)
	fmt.Println(errors.Is(err, fsroot.ErrOutsideRoot))

	// Ask mode: writes are refused with the reason.
	root.SetReadOnly(true, "Ask mode")
	err = root.WriteTextFile(ctx, notes, "changed")
	fmt.Println(errors.Is(err, fsroot.ErrReadOnly))
	// Output:
	// "two\n"
	// true
	// true
	// true
}

func ExampleSFTP() {
	ctx := context.Background()
	dest, err := sshconn.Parse("dev@build.example.com:22")
	if err != nil {
		fmt.Println(err)
		return
	}
	// Keys from ssh-agent, host verified against ~/.ssh/known_hosts; the
	// connection is dialed on first use and again after it drops.
	conn := sshconn.New(dest, sshconn.Config{
		KeyFiles: []string{os.ExpandEnv("$HOME/.ssh/id_ed25519")},
	})
	defer conn.Close()

	root, err := fsroot.NewSFTPConn(ctx, conn, "/home/dev/project", &fsroot.Options{
		Grants: []string{"/home/dev/shared-lib"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer root.Close()

	events, err := root.Watch(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() {
		for ev := range events {
			fmt.Println(ev)
		}
	}()
	text, err := root.ReadTextFile(ctx, "/home/dev/project/README.md", 1, 20)
	fmt.Println(text, err)
}
