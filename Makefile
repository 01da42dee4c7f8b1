# Pinned generator versions. `make proto` installs them into ./bin and
# regenerates shared/providerv1 from its .proto. Needs protoc (Debian:
# apt-get install protobuf-compiler).
PROTOC_GEN_GO_VERSION      := v1.36.11
PROTOC_GEN_GO_GRPC_VERSION := v1.6.0
BIN := $(CURDIR)/bin

.PHONY: proto test demo
proto:
	GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH="$(BIN):$$PATH" protoc --proto_path=shared/providerv1 \
		--go_out=shared/providerv1 --go_opt=paths=source_relative \
		--go-grpc_out=shared/providerv1 --go-grpc_opt=paths=source_relative \
		shared/providerv1/provider.proto

test:
	go vet ./... && go test -race ./...

demo:
	go run ./examples/host rules --cwd examples/demo/workspace --home examples/demo/home
