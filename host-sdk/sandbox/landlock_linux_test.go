package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/internal/testmain"
)

// The test binary doubles as the provider: the trampoline (this binary with
// ExecEnv set) restricts itself and executes this binary again through its
// descriptor, and that run, with probeEnv set, reports what it could do.
const probeEnv = "SANDBOX_TEST_PROBE"

// The roles this binary plays in TestProviderDiesWithAHostKilledOutright:
// a host that starts a trampoline, a trampoline whose Main runs on a thread
// the host did not start, and a provider that sleeps.
const (
	hostEnv      = "SANDBOX_TEST_HOST"
	offThreadEnv = "SANDBOX_TEST_OFF_THREAD"
	sleeperEnv   = "SANDBOX_TEST_SLEEPER"
)

func TestMain(m *testing.M) {
	if os.Getenv(offThreadEnv) != "" && Requested() {
		go func() {
			runtime.LockOSThread()
			Main()
		}()
		select {}
	}
	Main()
	switch {
	case os.Getenv(probeEnv) != "":
		probe()
		os.Exit(0)
	case os.Getenv(sleeperEnv) != "":
		fmt.Println("sleeping")
		time.Sleep(time.Minute)
		os.Exit(0)
	case os.Getenv(hostEnv) != "":
		startTrampoline()
	}
	testmain.Exit(m.Run())
}

// startTrampoline starts this binary as a trampoline, with a parent-death
// signal as a host does, prints its pid and waits to be killed. The
// provider it becomes writes to this process's standard output.
func startTrampoline() {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	f, err := os.Open(self)
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(self)
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = append(Spec{Binary: self, Off: true}.Env(), offThreadEnv+"=1", sleeperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// A provider dies with a host killed outright even when the trampoline's
// exec ran on a thread the host did not start, whose parent-death signal the
// kernel does not carry over by itself.
func TestProviderDiesWithAHostKilledOutright(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := exec.Command(self)
	host.Env = append(os.Environ(), hostEnv+"=1")
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer host.Process.Kill()
	lines := bufio.NewScanner(out)
	var pid int
	if !lines.Scan() {
		t.Fatal("the host printed no pid")
	}
	fmt.Sscan(lines.Text(), &pid)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !lines.Scan() || lines.Text() != "sleeping" {
		t.Fatalf("the provider did not start: %q", lines.Text())
	}
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return // gone, or dead and not yet reaped
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the provider (pid %d) outlived its host: %s", pid, stat)
		}
	}
}

// probe tries each argument ("read:PATH", "dial:ADDR") and prints one line
// per attempt: "ok" or the error.
func probe() {
	for _, arg := range os.Args[1:] {
		kind, target, _ := strings.Cut(arg, ":")
		var err error
		switch kind {
		case "read":
			_, err = os.ReadFile(target)
		case "dial":
			var c net.Conn
			if c, err = net.Dial("tcp", target); err == nil {
				c.Close()
			}
		}
		if err != nil {
			os.Stdout.WriteString(arg + " " + err.Error() + "\n")
		} else {
			os.Stdout.WriteString(arg + " ok\n")
		}
	}
}

func TestRulesGrantOnlyTheBinaryTheSystemAndTheSocketDir(t *testing.T) {
	var got []string
	for _, r := range rules(Spec{Binary: "/p/bin", ReadExec: []string{"/usr/lib"}, ReadWrite: []string{"/tmp/s"}}) {
		got = append(got, fmt.Sprint(r))
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{"/proc/self/fd/3", "/usr/lib", "/tmp/s", "execute", "make_sock"} {
		if !strings.Contains(text, want) {
			t.Errorf("rule set lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(strings.SplitN(text, "\n", 2)[0], "read_dir") {
		t.Errorf("the binary's rule grants more than its file:\n%s", text)
	}
}

func TestTrampolineConfinesTheProvider(t *testing.T) {
	if _, ok := Probe(); !ok {
		t.Skip("no Landlock on this kernel")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	run := func(off bool) string {
		f, err := os.Open(self)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(self, "read:"+secret, "read:/usr/lib/os-release", "dial:"+ln.Addr().String())
		cmd.ExtraFiles = []*os.File{f}
		cmd.Env = append(Spec{Binary: self, ReadExec: SystemReadExec(), ReadWrite: []string{dir + "/sock"}, Off: off}.Env(), probeEnv+"=1")
		os.Mkdir(dir+"/sock", 0o700)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("trampoline: %v\n%s", err, out)
		}
		return string(out)
	}

	out := run(false)
	if !strings.Contains(out, "read:"+secret+" open "+secret+": permission denied") {
		t.Errorf("a file outside the sandbox was readable:\n%s", out)
	}
	if _, err := os.Stat("/usr/lib/os-release"); err == nil && !strings.Contains(out, "read:/usr/lib/os-release ok") {
		t.Errorf("a system file was not readable:\n%s", out)
	}
	if !strings.Contains(out, "dial:"+ln.Addr().String()+" dial tcp") {
		t.Errorf("the provider reached the network:\n%s", out)
	}
	if out := run(true); strings.Count(out, " ok\n") != 3 {
		t.Errorf("with the sandbox off, everything should work:\n%s", out)
	}
}
