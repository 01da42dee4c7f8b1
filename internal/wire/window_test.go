package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// tap keeps a copy of what a connection writes.
type tap struct {
	net.Conn
	mu  *sync.Mutex
	out *bytes.Buffer
}

func (t tap) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.out.Write(p)
	t.mu.Unlock()
	return t.Conn.Write(p)
}

// tapListener taps every connection it accepts.
type tapListener struct {
	net.Listener
	mu  *sync.Mutex
	out *bytes.Buffer
}

func (l tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tap{c, l.mu, l.out}, nil
}

// pings counts the HTTP/2 PING frames (not their acknowledgements) in what
// one side of a connection wrote; preface is the bytes it wrote before the
// first frame.
func pings(t *testing.T, written []byte, preface string) int {
	t.Helper()
	if !bytes.HasPrefix(written, []byte(preface)) {
		t.Fatalf("the connection did not start with %q", preface)
	}
	fr := http2.NewFramer(nil, bytes.NewReader(written[len(preface):]))
	fr.SetMaxReadFrameSize(1 << 24)
	n := 0
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("reading the frames written: %v", err)
		}
		if p, ok := f.(*http2.PingFrame); ok && !p.IsAck() {
			n++
		}
	}
}

// TestConnectionsDoNotPing checks that neither the host's connection to a
// provider nor the provider's server sends the bandwidth-estimation pings
// gRPC sends by default after data arrives: each would wake the other
// process for nothing (see WindowBytes).
func TestConnectionsDoNotPing(t *testing.T) {
	var mu sync.Mutex
	var fromServer, fromClient bytes.Buffer
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "sock"))
	if err != nil {
		t.Fatal(err)
	}
	srv := pluginServer(nil)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(tapListener{lis, &mu, &fromServer})
	defer srv.Stop()

	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "unix", addr)
		if err != nil {
			return nil, err
		}
		return tap{c, &mu, &fromClient}, nil
	}
	opts := append(hostDialOptions(0), grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for range 20 {
		if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	srv.Stop()

	mu.Lock()
	defer mu.Unlock()
	if n := pings(t, fromClient.Bytes(), http2.ClientPreface); n != 0 {
		t.Errorf("the host sent %d pings over 20 calls", n)
	}
	if n := pings(t, fromServer.Bytes(), ""); n != 0 {
		t.Errorf("the provider's server sent %d pings over 20 calls", n)
	}
}
