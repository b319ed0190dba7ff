package timeparse

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // so Europe/Berlin loads everywhere
)

// now is the fixed reference: 2026-01-26 12:00 UTC, a Monday.
var now = time.Date(2026, 1, 26, 12, 0, 0, 0, time.UTC)

var plus2 = time.FixedZone("X", 2*3600)

func berlin(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatalf("load Europe/Berlin: %v", err)
	}
	return loc
}

func utc(y int, m time.Month, d, h, min, s, ns int) time.Time {
	return time.Date(y, m, d, h, min, s, ns, time.UTC)
}

// okCases are read with now and loc = plus2 (UTC+2, so local 2026-01-26
// 14:00 at now).
var okCases = []struct {
	in   string
	want time.Time
}{
	// RFC 3339 / ISO 8601.
	{"2026-01-26T07:30:00Z", utc(2026, 1, 26, 7, 30, 0, 0)},
	{"2026-01-26t07:30:00z", utc(2026, 1, 26, 7, 30, 0, 0)},
	{"2026-01-26T07:30:00+02:00", utc(2026, 1, 26, 5, 30, 0, 0)},
	{"2026-01-26T07:30:00-05:30", utc(2026, 1, 26, 13, 0, 0, 0)},
	{"2026-01-26T07:30:00+0200", utc(2026, 1, 26, 5, 30, 0, 0)},
	{"2026-01-26T07:30+02", utc(2026, 1, 26, 5, 30, 0, 0)},
	{"2026-01-26T07:30Z", utc(2026, 1, 26, 7, 30, 0, 0)},
	{"2026-01-26T07:30:00.123456789Z", utc(2026, 1, 26, 7, 30, 0, 123456789)},
	{"2026-01-26 07:30 UTC", utc(2026, 1, 26, 7, 30, 0, 0)},
	{"2026-01-26 07:30 +02:00", utc(2026, 1, 26, 5, 30, 0, 0)},
	// Without a zone: loc.
	{"2026-01-26T07:30", utc(2026, 1, 26, 5, 30, 0, 0)},
	{"2026-01-26 07:30", utc(2026, 1, 26, 5, 30, 0, 0)},
	{"2026-01-26T07:30:00", utc(2026, 1, 26, 5, 30, 0, 0)},
	{"2026-01-26T07:30:00.123", utc(2026, 1, 26, 5, 30, 0, 123000000)},
	{"2026-01-26 07:30:00,5", utc(2026, 1, 26, 5, 30, 0, 500000000)},
	{"2026-01-26 3pm", utc(2026, 1, 26, 13, 0, 0, 0)},
	{"2024-02-29", utc(2024, 2, 28, 22, 0, 0, 0)},
	// Bare date: midnight in loc.
	{"2026-01-26", utc(2026, 1, 25, 22, 0, 0, 0)},
	// Bare time: today in loc.
	{"15:00", utc(2026, 1, 26, 13, 0, 0, 0)},
	{"9:05", utc(2026, 1, 26, 7, 5, 0, 0)},
	{"15:00:30", utc(2026, 1, 26, 13, 0, 30, 0)},
	{"00:00", utc(2026, 1, 25, 22, 0, 0, 0)},
	{"23:59:59", utc(2026, 1, 26, 21, 59, 59, 0)},
	{"3pm", utc(2026, 1, 26, 13, 0, 0, 0)},
	{"3PM", utc(2026, 1, 26, 13, 0, 0, 0)},
	{"3 pm", utc(2026, 1, 26, 13, 0, 0, 0)},
	{"3:15pm", utc(2026, 1, 26, 13, 15, 0, 0)},
	{"3:15am", utc(2026, 1, 26, 1, 15, 0, 0)},
	{"12am", utc(2026, 1, 25, 22, 0, 0, 0)},
	{"12pm", utc(2026, 1, 26, 10, 0, 0, 0)},
	{"12:30am", utc(2026, 1, 25, 22, 30, 0, 0)},
	// Relative.
	{"-2h", utc(2026, 1, 26, 10, 0, 0, 0)},
	{"-90m", utc(2026, 1, 26, 10, 30, 0, 0)},
	{"-45s", utc(2026, 1, 26, 11, 59, 15, 0)},
	{"-3d", utc(2026, 1, 23, 12, 0, 0, 0)},
	{"-1w", utc(2026, 1, 19, 12, 0, 0, 0)},
	{"-1h30m", utc(2026, 1, 26, 10, 30, 0, 0)},
	{"-1d2h", utc(2026, 1, 25, 10, 0, 0, 0)},
	{"- 2 hours", utc(2026, 1, 26, 10, 0, 0, 0)},
	{"-0s", now},
	{"2h ago", utc(2026, 1, 26, 10, 0, 0, 0)},
	{"1h30m ago", utc(2026, 1, 26, 10, 30, 0, 0)},
	{"3 days ago", utc(2026, 1, 23, 12, 0, 0, 0)},
	{"1 week ago", utc(2026, 1, 19, 12, 0, 0, 0)},
	{"2 weeks ago", utc(2026, 1, 12, 12, 0, 0, 0)},
	{"90 minutes ago", utc(2026, 1, 26, 10, 30, 0, 0)},
	{"90 mins ago", utc(2026, 1, 26, 10, 30, 0, 0)},
	{"45 seconds ago", utc(2026, 1, 26, 11, 59, 15, 0)},
	{"1 hour 30 minutes ago", utc(2026, 1, 26, 10, 30, 0, 0)},
	{"an hour ago", utc(2026, 1, 26, 11, 0, 0, 0)},
	{"a day ago", utc(2026, 1, 25, 12, 0, 0, 0)},
	{"  2H   AGO  ", utc(2026, 1, 26, 10, 0, 0, 0)},
	{"-100000h", now.Add(-100000 * time.Hour)},
	{"-3000000h", now.Add(-1000000 * time.Hour).Add(-1000000 * time.Hour).Add(-1000000 * time.Hour)},
	// Words.
	{"now", now},
	{"NOW", now},
	{"today", utc(2026, 1, 25, 22, 0, 0, 0)},
	{"yesterday", utc(2026, 1, 24, 22, 0, 0, 0)},
	{"yesterday 15:00", utc(2026, 1, 25, 13, 0, 0, 0)},
	{"Yesterday 3pm", utc(2026, 1, 25, 13, 0, 0, 0)},
	{"yesterday at 3:15pm", utc(2026, 1, 25, 13, 15, 0, 0)},
	{"today 09:30", utc(2026, 1, 26, 7, 30, 0, 0)},
	{"today\t09:30", utc(2026, 1, 26, 7, 30, 0, 0)},
	// Month and day: the reference's year unless given, midnight unless
	// a time follows.
	{"Mar 4", utc(2026, 3, 3, 22, 0, 0, 0)},
	{"4 Mar", utc(2026, 3, 3, 22, 0, 0, 0)},
	{"mar 4th", utc(2026, 3, 3, 22, 0, 0, 0)},
	{"march 4 10am", utc(2026, 3, 4, 8, 0, 0, 0)},
	{"4 March 15:30", utc(2026, 3, 4, 13, 30, 0, 0)},
	{"March 4, 2026 15:30", utc(2026, 3, 4, 13, 30, 0, 0)},
	{"4 march 2025", utc(2025, 3, 3, 22, 0, 0, 0)},
	{"jan 1 at 9:00", utc(2026, 1, 1, 7, 0, 0, 0)},
	{"Sept 30", utc(2026, 9, 29, 22, 0, 0, 0)},
	{"feb 29 2024", utc(2024, 2, 28, 22, 0, 0, 0)},
	{"1st jan 2027 3pm", utc(2027, 1, 1, 13, 0, 0, 0)},
	// Weekdays: the latest on or before the reference day (a Monday).
	{"monday", utc(2026, 1, 25, 22, 0, 0, 0)},
	{"Mon 9am", utc(2026, 1, 26, 7, 0, 0, 0)},
	{"sunday", utc(2026, 1, 24, 22, 0, 0, 0)},
	{"tue 9am", utc(2026, 1, 20, 7, 0, 0, 0)},
	{"Friday at 3pm", utc(2026, 1, 23, 13, 0, 0, 0)},
	{"thurs 23:59", utc(2026, 1, 22, 21, 59, 0, 0)},
	// Unix seconds.
	{"1769412600", time.Unix(1769412600, 0).UTC()},
	{"123456789", time.Unix(123456789, 0).UTC()},
	{"99999999999", time.Unix(99999999999, 0).UTC()},
}

// errCases are refused; the error must name the input and the forms.
var errCases = []struct {
	in     string
	reason string // a substring the message must contain, beyond the input
}{
	{"next tuesday", ""},
	{"tomorrow", ""},
	{"2h", ""},
	{"15", ""},
	{"1500", ""},
	{"12345678", ""},
	{"123456789012", ""},
	{"-", ""},
	{"ago", ""},
	{"-2h ago", ""},
	{"-2", "unit is missing"},
	{"-2 months", `unknown unit "months"`},
	{"-1.5h", ""},
	{"2026-13-01", "month 13"},
	{"2026-00-10", "month 0"},
	{"2026-02-30", "day 30"},
	{"2025-02-29", "day 29"},
	{"2026-01-26T25:00", "hour 25"},
	{"2026-01-26T07:60", "minute 60"},
	{"2026-01-26T07:30:60", "second 60"},
	{"2026-01-26T07:30:00+25:00", "zone offset"},
	{"2026-01-26T07:30:00.1234567890Z", ""},
	{"2026-01-26T07:30:00 EST", ""},
	{"2026-01-26T", ""},
	{"2026-01-26T7", ""},
	{"2026/01/26", ""},
	{"25:00", "hour 25"},
	{"24:00", "hour 24"},
	{"15:61", "minute 61"},
	{"13pm", "hour 13"},
	{"0am", "hour 0"},
	{"3pmx", ""},
	{"yesterday noon", ""},
	{"yesterday 25:00", "hour 25"},
	{"today at", ""},
	{"0000-06-01T00:00Z", "1 to 9999"},
	{"-600000w", "too large"},
	{"-99999999999999999999999h", "too large"},
	{"-100000000000d", "too large"},
	{"-2000000d", "1 to 9999"},
	{"first\nsecond", ""},
	{"feb 30", "day 30"},
	{"30 feb 2026", "day 30"},
	{"mar 32", "day 32"},
	{"feb 29 2025", "day 29"},
	{"mar", ""},
	{"mar 4 25:00", "hour 25"},
	{"4 mar 10", ""},
	{"mar 4 2026 2027", ""},
	{"march fourth", ""},
	{"monday noon", ""},
	{"mondays", ""},
	{"mon 4 mar", ""},
}

func TestParse(t *testing.T) {
	for _, c := range okCases {
		got, err := Parse(c.in, now, plus2)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.in, got, c.want)
		}
		if got.Location() != time.UTC {
			t.Errorf("Parse(%q) is in %v, want UTC", c.in, got.Location())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range errCases {
		got, err := Parse(c.in, now, plus2)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", c.in, got)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, strconv.Quote(c.in)) {
			t.Errorf("Parse(%q) error %q does not show the input", c.in, msg)
		}
		if !strings.Contains(msg, "accepted forms: "+Forms) {
			t.Errorf("Parse(%q) error %q does not list the accepted forms", c.in, msg)
		}
		if !strings.Contains(msg, c.reason) {
			t.Errorf("Parse(%q) error %q does not say %q", c.in, msg, c.reason)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) error is not one line: %q", c.in, msg)
		}
		var e *Error
		if !errors.As(err, &e) || e.Input != c.in {
			t.Errorf("Parse(%q) error is not an *Error with the input: %#v", c.in, err)
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "   ", "\t\n"} {
		_, err := Parse(in, now, plus2)
		if err == nil {
			t.Fatalf("Parse(%q) succeeded", in)
		}
		want := "a timestamp is required; accepted forms: " + Forms
		if err.Error() != want {
			t.Errorf("Parse(%q) error %q, want %q", in, err, want)
		}
	}
}

func TestErrorShowsLongInputShortened(t *testing.T) {
	in := strings.Repeat("é", 500)
	_, err := Parse(in, now, plus2)
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.Contains(err.Error(), strings.Repeat("é", maxShown)+"…") || strings.Contains(err.Error(), strings.Repeat("é", maxShown+1)) {
		t.Errorf("long input not shortened to %d runes: %q", maxShown, err)
	}
}

func TestNilLocIsUTC(t *testing.T) {
	got, err := Parse("2026-01-26 07:30", now, nil)
	if err != nil || !got.Equal(utc(2026, 1, 26, 7, 30, 0, 0)) {
		t.Errorf("Parse with nil loc = %v, %v", got, err)
	}
}

// TestBerlinDST checks calendar arithmetic across the spring-forward change
// (2026-03-29 02:00 CET -> 03:00 CEST) and the fall-back one
// (2026-10-25 03:00 CEST -> 02:00 CET).
func TestBerlinDST(t *testing.T) {
	loc := berlin(t)
	spring := time.Date(2026, 3, 30, 12, 0, 0, 0, loc) // CEST, day after the change
	fall := time.Date(2026, 10, 26, 12, 0, 0, 0, loc)  // CET, day after the change
	cases := []struct {
		in   string
		now  time.Time
		want time.Time
	}{
		{"yesterday 15:00", spring, time.Date(2026, 3, 29, 15, 0, 0, 0, loc)},
		{"yesterday 15:00", spring, utc(2026, 3, 29, 13, 0, 0, 0)},
		{"yesterday", spring, utc(2026, 3, 28, 23, 0, 0, 0)},
		{"today", spring, utc(2026, 3, 29, 22, 0, 0, 0)},
		{"yesterday 3pm", fall, utc(2026, 10, 25, 14, 0, 0, 0)},
		{"-1d", spring, utc(2026, 3, 29, 10, 0, 0, 0)}, // 12:00 CEST on the 29th
		{"-24h", spring, utc(2026, 3, 29, 10, 0, 0, 0)},
		{"-1d", fall, utc(2026, 10, 25, 11, 0, 0, 0)}, // 12:00 CET on the 25th
		{"-24h", fall, utc(2026, 10, 25, 11, 0, 0, 0)},
		{"-2d", spring, utc(2026, 3, 28, 11, 0, 0, 0)}, // 12:00 CET on the 28th
		{"-48h", spring, utc(2026, 3, 28, 10, 0, 0, 0)},
		{"2026-03-29", spring, utc(2026, 3, 28, 23, 0, 0, 0)},
		{"2026-07-01 12:00", spring, utc(2026, 7, 1, 10, 0, 0, 0)},
		{"2026-01-26 12:00", spring, utc(2026, 1, 26, 11, 0, 0, 0)},
		{"15:00", spring, utc(2026, 3, 30, 13, 0, 0, 0)},
		// In the gap, time.Date moves the wall clock forward an hour.
		{"2026-03-29 02:30", spring, utc(2026, 3, 29, 1, 30, 0, 0)},
		// At the overlap's midnight-relative reference: now is 00:30 CET
		// local on the 1st while UTC still says the 31st.
		{"today", time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC), utc(2026, 12, 31, 23, 0, 0, 0)},
		{"yesterday", time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC), utc(2026, 12, 30, 23, 0, 0, 0)},
	}
	for _, c := range cases {
		got, err := Parse(c.in, c.now, loc)
		if err != nil {
			t.Errorf("Parse(%q, %v): %v", c.in, c.now, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("Parse(%q, %v) = %v, want %v", c.in, c.now, got, c.want.UTC())
		}
	}
	// The fixed table read in Berlin (UTC+1 in January) stays sane.
	for _, c := range okCases {
		if _, err := Parse(c.in, now, loc); err != nil {
			t.Errorf("Parse(%q) in Berlin: %v", c.in, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range okCases {
		f.Add(c.in)
	}
	for _, c := range errCases {
		f.Add(c.in)
	}
	f.Add("")
	f.Add("9999-12-31T23:59:59.999999999Z")
	f.Add("0001-01-01T00:00:00Z")
	locs := []*time.Location{time.UTC, plus2, berlin(f)}
	f.Fuzz(func(t *testing.T, s string) {
		for _, loc := range locs {
			got, err := Parse(s, now, loc)
			if err != nil {
				msg := err.Error()
				if !strings.Contains(msg, "accepted forms: ") || strings.Contains(msg, "\n") {
					t.Fatalf("Parse(%q) error is not one line with the forms: %q", s, msg)
				}
				continue
			}
			if got.Location() != time.UTC {
				t.Fatalf("Parse(%q) = %v, not in UTC", s, got)
			}
			if y := got.Year(); y < 1 || y > 9999 {
				t.Fatalf("Parse(%q) = %v, outside years 1..9999", s, got)
			}
			text := got.Format(time.RFC3339Nano)
			again, err := Parse(text, now, loc)
			if err != nil {
				t.Fatalf("Parse(%q) = %s, which does not re-parse: %v", s, text, err)
			}
			if !again.Equal(got) {
				t.Fatalf("Parse(%q) = %s, which re-parses as %s", s, text, again.Format(time.RFC3339Nano))
			}
		}
	})
}
