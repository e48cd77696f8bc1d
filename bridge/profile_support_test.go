package bridge

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type vendorOpts struct{ Flag string }

func TestVendorOptions(t *testing.T) {
	for _, tt := range []struct {
		vendor any
		want   vendorOpts
	}{
		{nil, vendorOpts{}},
		{vendorOpts{Flag: "v"}, vendorOpts{Flag: "v"}},
		{&vendorOpts{Flag: "p"}, vendorOpts{Flag: "p"}},
		{(*vendorOpts)(nil), vendorOpts{}},
	} {
		got, err := VendorOptions[vendorOpts](LaunchOptions{Vendor: tt.vendor})
		if err != nil || got != tt.want {
			t.Errorf("VendorOptions(%#v) = %+v, %v; want %+v", tt.vendor, got, err, tt.want)
		}
	}
	_, err := VendorOptions[vendorOpts](LaunchOptions{Vendor: struct{ Other int }{}})
	if !errors.Is(err, ErrVendorOptions) || !strings.Contains(err.Error(), "bridge.vendorOpts") {
		t.Fatalf("foreign options: %v", err)
	}
}

// A profile refuses options of another profile's type before anything
// starts, naming itself.
func TestProfileRefusesForeignVendorOptions(t *testing.T) {
	p := &Profile{Name: "fussy", Binaries: []string{"sh"}, Args: func(o LaunchOptions) ([]string, error) {
		if _, err := VendorOptions[vendorOpts](o); err != nil {
			return nil, err
		}
		return []string{"-c", "true"}, nil
	}}
	if _, _, err := p.Command(t.Context(), LaunchOptions{Vendor: 42}); !errors.Is(err, ErrVendorOptions) || !strings.Contains(err.Error(), "fussy") {
		t.Fatalf("Command with foreign options: %v", err)
	}
	cmd, _, err := p.Command(t.Context(), LaunchOptions{Vendor: vendorOpts{}, ExtraArgs: []string{"x"}})
	if err != nil || !reflect.DeepEqual(cmd.Args, []string{"-c", "true", "x"}) {
		t.Fatalf("Command: %v, %v", cmd, err)
	}
}

func TestTakesAgentMode(t *testing.T) {
	plain := &Profile{Name: "plain"}
	picky := &Profile{Name: "picky", AgentModeAtLaunch: func(m string) bool { return m == "reviewer" }}
	if plain.TakesAgentMode("reviewer") || picky.TakesAgentMode("build") || picky.TakesAgentMode("") || !picky.TakesAgentMode("reviewer") {
		t.Fatal("TakesAgentMode does not follow AgentModeAtLaunch")
	}
}

func TestLaunchOptionsHost(t *testing.T) {
	o := LaunchOptions{Env: []string{"HOME=/h"}}
	if o.HostHome() != "/h" || (LaunchOptions{Home: "/x", Env: o.Env}).HostHome() != "/x" {
		t.Errorf("HostHome %q", o.HostHome())
	}
	if _, ok := o.HostFS().(LocalFS); !ok {
		t.Errorf("HostFS %T", o.HostFS())
	}
	l := NewLaunch(&Profile{Name: "p"}, o)
	if l.Options().Clock == nil {
		t.Error("NewLaunch left no clock")
	}
	if got := l.Update(func(o *LaunchOptions) { o.Effort = "max" }); got.Effort != "max" || l.Options().Effort != "max" {
		t.Errorf("Update: %+v", l.Options())
	}
}

// TestVendorOptionsErrorSaysItOnce: a profile's refusal of another
// profile's options names the profile and "launch options" once.
func TestVendorOptionsErrorSaysItOnce(t *testing.T) {
	p := &Profile{Name: "plain", Args: func(o LaunchOptions) ([]string, error) {
		_, err := VendorOptions[vendorOpts](o)
		return nil, err
	}}
	_, err := p.argv(LaunchOptions{Vendor: "x"})
	if !errors.Is(err, ErrVendorOptions) {
		t.Fatalf("argv: %v, want ErrVendorOptions", err)
	}
	if text := err.Error(); strings.Count(text, "launch options") != 1 || strings.Count(text, "bridge:") != 1 || !strings.Contains(text, "plain") {
		t.Errorf("error %q: want the profile, and bridge and launch options once", text)
	}
}
