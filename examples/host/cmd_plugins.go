package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/trust"
)

// lockFile is the user's plugin lock, under --home.
func lockFile(cfg *config) string {
	if cfg.home == "" {
		return ""
	}
	return trust.DefaultLockFile(cfg.home)
}

// trustCommand is the exact command that trusts the binary at path: the
// warning about an untrusted provider ends with it.
func trustCommand(path, home string) string {
	name := "host"
	if exe, err := os.Executable(); err == nil {
		name = filepath.Base(exe)
	}
	cmd := name + " plugins trust " + shellQuote(path)
	// The lock lives under the home the host was given; name it when it is
	// not the one the command would default to, or the command trusts the
	// binary in another lock.
	if home != os.Getenv("HOME") {
		cmd += " --home " + shellQuote(home)
	}
	return cmd
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type pluginsJSON struct {
	LockFile  string         `json:"lockFile"`
	Providers []providerJSON `json:"providers"`
	Warnings  []warningJSON  `json:"warnings"`
}

type trustedJSON struct {
	LockFile string        `json:"lockFile"`
	Trusted  []trust.Entry `json:"trusted"`
}

// cmdPlugins lists every provider found, started or refused, with how the
// host knows what runs; "plugins trust PATH..." records binaries in the lock.
func cmdPlugins(ctx context.Context, cfg *config, args []string, _ io.Reader, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "trust" {
		return trustPlugins(cfg, args[1:], stdout)
	}
	if len(args) != 0 {
		return &exitError{code: 2, msg: "usage: plugins [trust PATH...]"}
	}
	res, err := loadRules(ctx, cfg)
	if err != nil {
		return err
	}
	doc := pluginsJSON{LockFile: lockFile(cfg), Providers: providerRows(res.Providers), Warnings: warningsJSON(res.Warnings)}
	if cfg.json {
		return writeJSON(stdout, doc)
	}
	fmt.Fprintf(stdout, "PROVIDERS (%d; lock file %s)\n", len(doc.Providers), doc.LockFile)
	t := newTable(stdout, "NAME", "VERSION", "PRIORITY", "DEFAULT", "STATUS", "SANDBOX", "SHA256", "PATH", "WHY")
	for _, p := range doc.Providers {
		prio, def := strconv.Itoa(p.Priority), strconv.Itoa(p.DefaultPriority)
		if p.Version == "" && p.Error != "" {
			prio, def = "", ""
		}
		sum := p.SHA256
		if len(sum) > 16 {
			sum = sum[:16] + "…"
		}
		t.row(p.Name, p.Version, prio, def, p.Status, p.Sandbox, sum, p.Origin, p.Error)
	}
	t.flush()
	printWarnings(stdout, doc.Warnings)
	return nil
}

func trustPlugins(cfg *config, paths []string, stdout io.Writer) error {
	if len(paths) == 0 {
		return &exitError{code: 2, msg: "usage: plugins trust PATH..."}
	}
	path := lockFile(cfg)
	if path == "" {
		return &exitError{code: 2, msg: "no home directory for the lock file: set --home or $HOME"}
	}
	lock, err := trust.Read(path)
	if err != nil {
		return err
	}
	doc := trustedJSON{LockFile: path, Trusted: []trust.Entry{}}
	for _, p := range paths {
		e, err := trust.Trust(&lock, p, time.Now())
		if err != nil {
			return &exitError{code: 1, msg: "not trusted: " + err.Error()}
		}
		if !strings.HasPrefix(e.Name, broker.BinaryPrefix) {
			return &exitError{code: 1, msg: fmt.Sprintf("not trusted: %s: a provider binary's name starts with %s", e.Path, broker.BinaryPrefix)}
		}
		doc.Trusted = append(doc.Trusted, e)
	}
	if err := trust.Write(path, lock); err != nil {
		return err
	}
	if cfg.json {
		return writeJSON(stdout, doc)
	}
	for _, e := range doc.Trusted {
		fmt.Fprintf(stdout, "trusted %s sha256:%s in %s\n", e.Path, e.SHA256, path)
	}
	return nil
}
