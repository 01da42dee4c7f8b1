package wire

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	protov2 "google.golang.org/protobuf/proto"

	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// maxBatchItems bounds the findings in one batch. Decoding a message builds
// every item of a batch before the host's caps see the first, and an empty
// item is two bytes on the wire but some eighty in memory: without a bound,
// one message of the default 4 MiB limit would cost the host about 200 MB.
// The SDK sends a batch before it holds this many.
const maxBatchItems = 4096

// findingsCodec decodes what a provider sends on Discover and Session as
// gRPC's proto codec does, after a look at the bytes that refuses a batch
// of more than maxBatchItems items or one holding a batch: the look
// allocates nothing, so such a message costs the host only its bytes.
type findingsCodec struct {
	encoding.CodecV2 // gRPC's proto codec, for everything else
}

// findingsCallOptions are the options of the host's Discover and Session
// calls: the receive limit for rules of maxRuleBytes, and findingsCodec.
func findingsCallOptions(maxRuleBytes int64) []grpc.CallOption {
	return append(callLimits(maxRuleBytes), grpc.ForceCodecV2(findingsCodec{encoding.GetCodecV2(proto.Name)}))
}

func (c findingsCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*pb.DiscoverResponse)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	b := buf.ReadOnlyData()
	if err := checkBatch(b); err != nil {
		return err
	}
	return protov2.Unmarshal(b, m) // copies what it keeps, so buf can go back
}

// checkBatch looks at an encoded DiscoverResponse and refuses a batch of
// more than maxBatchItems items or with a batch among them. A decoder
// merges a message field that appears more than once, so the items of every
// occurrence count. Anything it cannot read is left for the decoder to
// refuse.
func checkBatch(b []byte) error {
	items := 0
	return eachBytes(b, batchField, func(batch []byte) error {
		return eachBytes(batch, itemsField, func(item []byte) error {
			if items++; items > maxBatchItems {
				return fmt.Errorf("a batch of more than %d findings, the most one may hold", maxBatchItems)
			}
			return eachBytes(item, batchField, func([]byte) error {
				return fmt.Errorf("a batch inside a batch")
			})
		})
	})
}

// The field numbers checkBatch reads: DiscoverResponse.batch and
// Batch.items.
const (
	batchField = 3
	itemsField = 1
)

// eachBytes calls f with each value of the length-delimited field num in
// the encoded message b, and stops at f's first error. It stops quietly at
// bytes that are not a message: the decoder refuses those.
func eachBytes(b []byte, num protowire.Number, f func([]byte) error) error {
	for len(b) > 0 {
		n, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil
		}
		b = b[k:]
		m := protowire.ConsumeFieldValue(n, typ, b)
		if m < 0 {
			return nil
		}
		if n == num && typ == protowire.BytesType {
			value, _ := protowire.ConsumeBytes(b[:m])
			if err := f(value); err != nil {
				return err
			}
		}
		b = b[m:]
	}
	return nil
}
