package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/tools"
)

// BenchmarkMCPInProcessSDKFloor is the SDK alone doing what
// BenchmarkMCPInProcessMessageRange40 does around weft's call: a tool with
// an output schema that returns, ready made, the very bytes weft's
// get_message_range gives for those 40 messages, as text and as
// structured content, through an SDK client over in-memory transports.
// What it measures is the floor of that row without changing the SDK:
// encoding=sdk with the SDK's encoding of the result, encoding=wire with
// weft's (encodeToolResults).
func BenchmarkMCPInProcessSDKFloor(b *testing.B) {
	b.Run("encoding=sdk", func(b *testing.B) { benchSDKFloor(b, false) })
	b.Run("encoding=wire", func(b *testing.B) { benchSDKFloor(b, true) })
}

func benchSDKFloor(b *testing.B, wire bool) {
	svc, sid := benchService(b)
	tool, _ := tools.Lookup("get_message_range")
	args := map[string]any{"session_id": sid, "start_idx": 50000, "end_idx": 50039}
	raw, _ := json.Marshal(args)
	out, _, err := tools.Local{Service: svc}.Call(context.Background(), tool, raw)
	if err != nil {
		b.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:         "get_message_range",
		InputSchema:  &jsonschema.Schema{Type: "object"},
		OutputSchema: &jsonschema.Schema{Type: "object"},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: out}, nil
	})
	if wire {
		srv.AddReceivingMiddleware(encodeToolResults)
	}
	clientT, serverT := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	benchCalls(b, cs, "get_message_range", args)
	b.ReportMetric(float64(len(out)), "result-bytes")
}
