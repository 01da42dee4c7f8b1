package wire

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	protov2 "google.golang.org/protobuf/proto"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// emptyItems encodes a DiscoverResponse whose batch field appears once per
// count, each time with that many empty items: two bytes on the wire each.
func emptyItems(counts ...int) []byte {
	var out []byte
	for _, n := range counts {
		var batch []byte
		for range n {
			batch = protowire.AppendTag(batch, itemsField, protowire.BytesType)
			batch = protowire.AppendBytes(batch, nil)
		}
		out = protowire.AppendTag(out, batchField, protowire.BytesType)
		out = protowire.AppendBytes(out, batch)
	}
	return out
}

func decodeFindings(b []byte) (*pb.DiscoverResponse, error) {
	m := &pb.DiscoverResponse{}
	codec := findingsCodec{encoding.GetCodecV2(proto.Name)}
	return m, codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, m)
}

// The host refuses, before decoding it, a batch of more findings than a
// batch may hold, counted across every appearance of the field, and a batch
// inside a batch; a full batch decodes.
func TestFindingsCodecBoundsABatch(t *testing.T) {
	m, err := decodeFindings(emptyItems(maxBatchItems))
	if err != nil || len(m.GetBatch().GetItems()) != maxBatchItems {
		t.Fatalf("a full batch: %d items, err %v", len(m.GetBatch().GetItems()), err)
	}
	for name, b := range map[string][]byte{
		"one batch too many":      emptyItems(maxBatchItems + 1),
		"split over three fields": emptyItems(2000, 2000, 2000),
	} {
		if _, err := decodeFindings(b); err == nil || !strings.Contains(err.Error(), "the most one may hold") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	nested, _ := protov2.Marshal(&pb.DiscoverResponse{Item: &pb.DiscoverResponse_Batch{Batch: &pb.Batch{
		Items: []*pb.DiscoverResponse{{Item: &pb.DiscoverResponse_Batch{Batch: &pb.Batch{}}}},
	}}})
	if _, err := decodeFindings(nested); err == nil || !strings.Contains(err.Error(), "batch inside a batch") {
		t.Errorf("nested batch: err = %v", err)
	}
	// The refusal costs next to nothing, where decoding 4 MiB of empty
	// items built about 200 MB.
	flood := emptyItems(2_000_000)
	if allocs := testing.AllocsPerRun(3, func() { decodeFindings(flood) }); allocs > 20 {
		t.Errorf("refusing a flood allocated %.0f times", allocs)
	}
}

// The SDK never sends a batch the host would refuse.
func TestStreamSinkFillsABatchNoFurther(t *testing.T) {
	var out sent
	sink := newSizeOnlySink(&out, 64<<10)
	for range 3*maxBatchItems + 1 {
		sink.Warning(shared.Warning{})
	}
	sink.endWith(nil, false)
	if len(out) != 4 {
		t.Fatalf("%d messages for 3 × %d + 1 findings", len(out), maxBatchItems)
	}
	for _, m := range out {
		b, _ := protov2.Marshal(m)
		if err := checkBatch(b); err != nil {
			t.Fatal(err)
		}
	}
}

// flooder is a provider that skips the SDK and answers every discovery with
// one batch of 100,000 empty findings, 200 KB on the wire.
type flooder struct {
	pb.UnimplementedProviderServer
}

func (flooder) Discover(_ *pb.DiscoverRequest, stream grpc.ServerStreamingServer[pb.DiscoverResponse]) error {
	items := make([]*pb.DiscoverResponse, 100_000)
	for i := range items {
		items[i] = &pb.DiscoverResponse{}
	}
	return stream.Send(&pb.DiscoverResponse{Item: &pb.DiscoverResponse_Batch{Batch: &pb.Batch{Items: items}}})
}

// Over real gRPC, the host's Discover refuses the flood with an error that
// says why, and hands the sink nothing.
func TestDiscoverRefusesAFloodOfEmptyFindings(t *testing.T) {
	prov := dispensePlugin(t, rawPlugin{srv: flooder{}})
	var got findings
	err := prov.Discover(context.Background(), shared.DiscoverRequest{}, oneFile{}, &got)
	if err == nil || !strings.Contains(err.Error(), "the most one may hold") {
		t.Fatalf("err = %v, want the batch refused", err)
	}
	if len(got) != 0 {
		t.Errorf("the sink got %d findings", len(got))
	}
}
