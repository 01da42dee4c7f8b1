package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
)

// liveKey finds a script's running sessions among its testscript values.
type liveKey struct{}

// liveSessions are the `host session` processes a script runs in the
// background, by name, so it can change the workspace between events.
type liveSessions map[string]*liveSession

type liveSession struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

// liveSetup gives each script its own table of sessions; testscript keeps
// it with the script, and the deferred cleanup stops whatever a failed
// script left running.
func liveSetup(env *testscript.Env) {
	sessions := liveSessions{}
	env.Values[liveKey{}] = sessions
	env.Defer(func() {
		for _, s := range sessions {
			s.cancel()
			s.cmd.Wait()
		}
	})
}

// cmdLive drives a background `host session`:
//
//	live start [host flags]   start it and read the baseline line into stdout
//	live send JSON            send one event, and the line it answers into stdout
//	live stop                 close its stdin and wait (30 s at most) for a clean exit
//
// so the script can edit the workspace between events and check each answer
// with stdout and json.
func cmdLive(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! live")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: live start|send|stop ...")
	}
	sessions := ts.Value(liveKey{}).(liveSessions)
	s := sessions["main"]
	switch args[0] {
	case "start":
		if s != nil {
			ts.Fatalf("a session is already running")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		host, err := exec.LookPath("host") // installed by testscript.Main
		ts.Check(err)
		cmd := exec.CommandContext(ctx, host, append([]string{"session"}, args[1:]...)...)
		cmd.Dir = ts.Getenv("WORK")
		cmd.Env = scriptEnv(ts)
		s = &liveSession{cmd: cmd, cancel: cancel, stderr: &bytes.Buffer{}}
		cmd.Stderr = s.stderr
		in, err := cmd.StdinPipe()
		ts.Check(err)
		out, err := cmd.StdoutPipe()
		ts.Check(err)
		ts.Check(cmd.Start())
		s.in, s.out = in, bufio.NewReader(out)
		sessions["main"] = s
		s.answer(ts)
	case "send":
		if s == nil || len(args) != 2 {
			ts.Fatalf("usage: live send JSON, after live start")
		}
		if _, err := io.WriteString(s.in, args[1]+"\n"); err != nil {
			ts.Fatalf("sending to the session: %v; its stderr: %s", err, s.stderr)
		}
		s.answer(ts)
	case "stop":
		if s == nil {
			ts.Fatalf("no session is running")
		}
		s.in.Close()
		err := s.cmd.Wait()
		s.cancel()
		delete(sessions, "main")
		if err != nil {
			ts.Fatalf("session exited with %v; its stderr: %s", err, s.stderr)
		}
	default:
		ts.Fatalf("usage: live start|send|stop ...")
	}
}

// answer reads one output line into the script's stdout.
func (s *liveSession) answer(ts *testscript.TestScript) {
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		ts.Fatalf("reading the session's answer: %v; its stderr: %s", err, s.stderr)
	}
	ts.Stdout().Write(line)
}

// scriptEnv is the script's environment for a process started outside exec.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if v := ts.Getenv(k); v != "" || k == "RULEBROKER_PLUGIN_PATH" {
			env = append(env, k+"="+v)
			continue
		}
		env = append(env, kv)
	}
	for _, k := range []string{"WORK", "HOME", "PATH", "DSH_HOME", "BIN", "DEMO", "TMPDIR", procMarkerEnv} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// cmdKillProvider kills the built-in provider NAME of this script's host
// with SIGKILL, waits (10 s at most) until it is gone, and sets
// $KILLED_PID to its pid.
func cmdKillProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: killprovider NAME")
	}
	want := []byte(broker.BuiltinEnv + "=" + args[0] + "\x00")
	pid := 0
	for _, p := range scriptProcs(ts) {
		id, _ := strconv.Atoi(strings.Fields(p)[0])
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", id))
		if err == nil && bytes.Contains(env, want) {
			pid = id
		}
	}
	if pid == 0 {
		ts.Fatalf("no provider %s is running", args[0])
	}
	ts.Check(syscall.Kill(pid, syscall.SIGKILL))
	for i := 0; i < 100; i++ {
		// Gone from /proc once the host has reaped it, which is when it
		// learns of the exit.
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			time.Sleep(100 * time.Millisecond)
			ts.Setenv("KILLED_PID", strconv.Itoa(pid))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("provider %s (pid %d) did not go away", args[0], pid)
}
