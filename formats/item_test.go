package formats

import (
	"testing"
	"time"
)

func TestSpanText(t *testing.T) {
	d := time.Date(2026, 3, 3, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		first, last time.Time
		want        string
	}{
		{d, d, "2026-03-03 14:00 UTC"},
		{d, d.Add(95 * time.Minute), "2026-03-03 14:00–15:35 UTC"},
		{d, d.Add(26 * time.Hour), "2026-03-03 14:00 – 2026-03-04 16:00 UTC"},
	}
	for _, tt := range tests {
		if got := SpanText(tt.first, tt.last); got != tt.want {
			t.Errorf("SpanText(%v, %v) = %q, want %q", tt.first, tt.last, got, tt.want)
		}
	}
}
