package main

import (
	"testing"

	"weft/ops/summary"
)

func TestSummaryEndpointFromTheEnvironment(t *testing.T) {
	t.Setenv("WEFT_SUMMARY_URL", "http://127.0.0.1:9/v1")
	t.Setenv("WEFT_SUMMARY_MODEL", "small")
	t.Setenv("WEFT_SUMMARY_API_KEY", "k")
	t.Setenv("WEFT_SUMMARY_TIMEOUT", "30s")
	want := summary.Endpoint{URL: "http://127.0.0.1:9/v1", Model: "small", APIKey: "k", Timeout: "30s"}
	if got := summaryEndpoint(); got != want {
		t.Errorf("summaryEndpoint() = %+v, want %+v", got, want)
	}
	t.Setenv("WEFT_SUMMARY_URL", "")
	if summaryEndpoint().Configured() {
		t.Error("an empty WEFT_SUMMARY_URL configures an endpoint")
	}
}
