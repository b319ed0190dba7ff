package fuzzy

import "testing"

func TestMatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query, text string
		want        bool
	}{
		{"postgres", "We use PostgreSQL.", true},
		{"POSTGRES", "we use postgresql", true},
		{"sql", "SQL", true},
		{"qz", "quiz", false},
		{"a b", "A B", true},
		{"x", "", false},
		{"end", "the END", true},
		{"straße", "STRASSE oder Straße", true},
		{"ÉTÉ", "en été", true},
		{"zzz", "zz", false},
	}
	for _, tt := range tests {
		if got := NewMatcher(tt.query).Match([]byte(tt.text)); got != tt.want {
			t.Errorf("%q in %q: %v, want %v", tt.query, tt.text, got, tt.want)
		}
	}
}
