package main

import (
	"os"

	"weft/ops"
	"weft/ops/summary"
	"weft/store"
)

// newService is the service every command runs on, configured from the
// environment: the summary endpoint from WEFT_SUMMARY_URL,
// WEFT_SUMMARY_MODEL, WEFT_SUMMARY_API_KEY and WEFT_SUMMARY_TIMEOUT.
func newService(st *store.Store) *ops.Service {
	return ops.New(st, ops.WithSummaryEndpoint(summaryEndpoint()))
}

// summaryEndpoint reads the summary endpoint's settings; they are
// checked when a summary is asked for.
func summaryEndpoint() summary.Endpoint {
	return summary.Endpoint{
		URL:     os.Getenv(summary.SettingURL),
		Model:   os.Getenv(summary.SettingModel),
		APIKey:  os.Getenv(summary.SettingKey),
		Timeout: os.Getenv(summary.SettingTimeout),
	}
}
