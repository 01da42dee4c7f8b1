package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// sent records what a streamSink sends.
type sent []*pb.DiscoverResponse

func (s *sent) Send(m *pb.DiscoverResponse) error { *s = append(*s, m); return nil }

// newSizeOnlySink is a batching sink whose batches go only when full or
// flushed, so that how many messages a test sees does not depend on the
// machine's speed.
func newSizeOnlySink(out findingSender, limit int) *streamSink {
	s := newStreamSink(out, limit, true)
	s.delay = time.Hour
	return s
}

// findings records a sink's calls in order, as "rule NAME" and "warning
// MESSAGE".
type findings []string

func (f *findings) Rule(r shared.Rule) error { *f = append(*f, "rule "+r.Name); return nil }
func (f *findings) Warning(w shared.Warning) error {
	*f = append(*f, "warning "+w.Message)
	return nil
}

// decode delivers every message as the host does.
func (s sent) decode(t *testing.T) findings {
	t.Helper()
	var got findings
	for _, m := range s {
		items := []*pb.DiscoverResponse{m}
		if b, ok := m.GetItem().(*pb.DiscoverResponse_Batch); ok {
			items = b.Batch.GetItems()
		}
		for _, it := range items {
			if err := deliver(it, &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	return got
}

// TestStreamSinkBatches checks that a host that accepts batches gets a large
// discovery in a few messages, each within its limit, with every finding in
// the provider's order; and that a host that does not gets one finding per
// message.
func TestStreamSinkBatches(t *testing.T) {
	const limit = 64 << 10
	var want findings
	emit := func(sink shared.Sink) {
		for i := range 3000 {
			name := fmt.Sprintf("r%04d", i)
			if err := sink.Rule(shared.Rule{Name: name, Content: strings.Repeat("x", i%200)}); err != nil {
				t.Fatal(err)
			}
			if i%100 == 0 {
				if err := sink.Warning(shared.Warning{Message: "w" + name}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	want = nil
	emit(&want)

	for _, batched := range []bool{true, false} {
		var out sent
		sink := newStreamSink(&out, limit, false)
		if batched {
			sink = newSizeOnlySink(&out, limit)
		}
		emit(sink)
		if err := sink.endWith(nil, false); err != nil {
			t.Fatal(err)
		}
		if got := out.decode(t); !slices.Equal(got, want) {
			t.Fatalf("batched=%v: the host got %d findings, not the %d in order", batched, len(got), len(want))
		}
		for i, m := range out {
			if n := proto.Size(m); n > limit {
				t.Fatalf("batched=%v: message %d is %d bytes, over the limit of %d", batched, i, n, limit)
			}
		}
		switch {
		case batched && len(out) > 10:
			t.Errorf("batched: %d messages for %d findings", len(out), len(want))
		case !batched && len(out) != len(want):
			t.Errorf("not batched: %d messages for %d findings, want one each", len(out), len(want))
		}
		for _, m := range out {
			if _, ok := m.GetItem().(*pb.DiscoverResponse_Batch); ok != batched {
				t.Fatalf("batched=%v: sent %T", batched, m.GetItem())
			}
		}
	}
}

// A rule that fits the host's limit only on its own still arrives: it goes
// in a message of its own, between batches, and the order holds.
func TestStreamSinkSendsARuleTooLargeToBatchAlone(t *testing.T) {
	const limit = 8 << 10
	var out sent
	sink := newSizeOnlySink(&out, limit)
	alone := &pb.DiscoverResponse{Item: &pb.DiscoverResponse_Rule{Rule: &pb.Rule{Name: "big"}}}
	// Content that makes the rule exactly the limit as a message of its own.
	for n := limit - 16; proto.Size(alone) < limit; n++ {
		alone.GetRule().Content = strings.Repeat("x", n)
	}
	if n := proto.Size(alone); n != limit {
		t.Fatalf("test setup: the rule is %d bytes, want %d", n, limit)
	}
	sink.Rule(shared.Rule{Name: "a"})
	sink.Rule(shared.Rule{Name: "big", Content: alone.GetRule().Content})
	sink.Rule(shared.Rule{Name: "b"})
	sink.endWith(nil, false)
	if got := out.decode(t); !slices.Equal(got, findings{"rule a", "rule big", "rule b"}) {
		t.Fatalf("got %v", got)
	}
	if len(out) != 3 {
		t.Fatalf("%d messages, want the batch before, the rule alone, the batch after", len(out))
	}
	if _, ok := out[1].GetItem().(*pb.DiscoverResponse_Rule); !ok {
		t.Fatalf("the large rule went as %T", out[1].GetItem())
	}
	for i, m := range out {
		if n := proto.Size(m); n > limit {
			t.Fatalf("message %d is %d bytes, over the limit of %d", i, n, limit)
		}
	}
}

// A batch inside a batch is not a finding: the host says so and goes on.
func TestDeliverRefusesANestedBatch(t *testing.T) {
	var got findings
	nested := &pb.DiscoverResponse{Item: &pb.DiscoverResponse_Batch{Batch: &pb.Batch{
		Items: []*pb.DiscoverResponse{{Item: &pb.DiscoverResponse_Rule{Rule: &pb.Rule{Name: "hidden"}}}},
	}}}
	if err := deliver(nested, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], "batch inside a batch") {
		t.Fatalf("got %v", got)
	}
}

// many sends n rules with a warning after every tenth, then fails when
// asked to.
type many struct {
	n    int
	fail bool
}

func (many) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "many"}, nil
}

func (m many) Discover(_ context.Context, _ shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
	for i := range m.n {
		if err := sink.Rule(shared.Rule{Name: fmt.Sprint(i)}); err != nil {
			return err
		}
		if i%10 == 0 {
			if err := sink.Warning(shared.Warning{Message: fmt.Sprint(i)}); err != nil {
				return err
			}
		}
	}
	if m.fail {
		return fmt.Errorf("many: failed after %d rules", m.n)
	}
	return nil
}

// Over real gRPC, a host gets every finding of a batched discovery in
// order, and a provider's error after its findings is still the call's
// error.
func TestDiscoverDeliversBatchesInOrder(t *testing.T) {
	for _, fail := range []bool{false, true} {
		p := many{n: 5000, fail: fail}
		prov := dispense(t, p, false)
		var got, want findings
		p.Discover(context.Background(), shared.DiscoverRequest{}, nil, &want)
		err := prov.Discover(context.Background(), shared.DiscoverRequest{}, oneFile{}, &got)
		if fail != (err != nil) || fail && !strings.Contains(err.Error(), "failed after 5000 rules") {
			t.Fatalf("fail=%v: err = %v", fail, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("fail=%v: got %d findings, want the provider's %d in order", fail, len(got), len(want))
		}
	}
}

// lockedSent records what a streamSink sends from any goroutine.
type lockedSent struct {
	mu  sync.Mutex
	out sent
}

func (l *lockedSent) Send(m *pb.DiscoverResponse) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.Send(m)
}

func (l *lockedSent) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.out)
}

// A finding does not wait in a batch for a provider that stops sending: it
// goes after the batch delay, so what a provider found before it hung still
// reaches the host. Once the discovery is over, the sink refuses findings
// instead of using the ended stream.
func TestStreamSinkSendsAWaitingBatch(t *testing.T) {
	out := &lockedSent{}
	sink := newStreamSink(out, 64<<10, true)
	if err := sink.Warning(shared.Warning{Message: "child pid 1"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for out.len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the warning was never sent")
		}
		time.Sleep(time.Millisecond)
	}
	if err := sink.Rule(shared.Rule{Name: "last"}); err != nil {
		t.Fatal(err)
	}
	if err := sink.endWith(nil, false); err != nil {
		t.Fatal(err)
	}
	if err := sink.Rule(shared.Rule{Name: "late"}); !errors.Is(err, errDiscoveryOver) {
		t.Fatalf("a finding after the end: err = %v", err)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if got := out.out.decode(t); !slices.Equal(got, findings{"warning child pid 1", "rule last"}) {
		t.Fatalf("got %v", got)
	}
}

// In a session, a discovery ends with a Done: the last item of its last
// batch when the host takes batches, so a small discovery is one message;
// a message of its own when it does not. The Done carries the discovery's
// error as gRPC would have reported it.
func TestStreamSinkEndsASessionDiscoveryWithDone(t *testing.T) {
	for _, batched := range []bool{true, false} {
		var out sent
		sink := newStreamSink(&out, 64<<10, batched)
		sink.delay = time.Hour
		sink.Rule(shared.Rule{Name: "a"})
		if err := sink.endWith(context.DeadlineExceeded, true); err != nil {
			t.Fatalf("batched=%v: endWith returned the discovery's error in a session: %v", batched, err)
		}
		var last *pb.DiscoverResponse
		switch {
		case batched && len(out) == 1:
			items := out[0].GetBatch().GetItems()
			last = items[len(items)-1]
		case !batched && len(out) == 2:
			last = out[1]
		default:
			t.Fatalf("batched=%v: %d messages", batched, len(out))
		}
		done := last.GetDone()
		if done == nil || codes.Code(done.GetCode()) != codes.DeadlineExceeded {
			t.Fatalf("batched=%v: the discovery ended with %v", batched, last)
		}
	}
}

// A warning whose path is longer than any real one is cut, so it still
// fits a message: a rule refused for its size names its path in one, and a
// message over the host's limit would end the stream.
func TestStreamSinkCutsALongPath(t *testing.T) {
	const limit = 64 << 10
	for _, batched := range []bool{true, false} {
		var out sent
		sink := newStreamSink(&out, limit, batched)
		sink.delay = time.Hour
		if err := sink.Rule(shared.Rule{Name: "r", Path: strings.Repeat("p", limit)}); err != nil {
			t.Fatal(err)
		}
		if err := sink.Warning(shared.Warning{Path: strings.Repeat("q", 2*limit), Message: "w"}); err != nil {
			t.Fatal(err)
		}
		sink.endWith(nil, false)
		for i, m := range out {
			if n := proto.Size(m); n > limit {
				t.Fatalf("batched=%v: message %d is %d bytes, over the limit of %d", batched, i, n, limit)
			}
		}
		got := out.decode(t)
		if len(got) != 2 || !strings.Contains(got[0], `rule "r" not sent`) {
			t.Fatalf("batched=%v: got %.200q", batched, got)
		}
	}
}
