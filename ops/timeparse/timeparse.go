// Package timeparse reads the timestamps operators and agents type to
// navigate a thread: RFC 3339, dates, times of day, relative offsets and
// Unix seconds. Every face of weft (TUI, CLI, HTTP, MCP tools) reads times
// through Parse so that they all accept the same forms.
package timeparse

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Forms is the human list of accepted forms, used in error messages and help.
const Forms = "RFC 3339 (2026-01-26T07:30:00Z, 2026-01-26T07:30:00+02:00); " +
	"date and time in the local zone (2026-01-26T07:30, 2026-01-26 07:30:00.123); " +
	"date (2026-01-26, midnight); " +
	"month and day, this year unless one is given (Mar 4, 4 March, march 4 10am, Mar 4 2026 15:30); " +
	"weekday, the latest on or before today (monday, fri 9am); " +
	"time today (15:00, 15:00:30, 3pm, 3:15pm); " +
	"relative (-2h, -90m, -1h30m, -3d, -1w, 2h ago, 3 days ago, 90 minutes ago); " +
	"now, today, yesterday, today 09:30, yesterday 3pm; " +
	"Unix seconds (1769412600)"

// Error is an input Parse could not read. Its message is one line that
// shows the input, the reason when there is a specific one, and Forms.
type Error struct {
	Input  string // the input as given
	Reason string // what was wrong, e.g. "month 13 is out of range"; may be empty
}

// maxShown is how many runes of a bad input an error message repeats.
const maxShown = 80

// Error says what was wrong with the input and which forms are accepted.
func (e *Error) Error() string {
	if strings.TrimSpace(e.Input) == "" {
		return "a timestamp is required; accepted forms: " + Forms
	}
	in := e.Input
	if utf8.RuneCountInString(in) > maxShown {
		n := 0
		for i := range in {
			if n == maxShown {
				in = in[:i] + "…"
				break
			}
			n++
		}
	}
	if e.Reason != "" {
		return fmt.Sprintf("cannot read %q as a time: %s; accepted forms: %s", in, e.Reason, Forms)
	}
	return fmt.Sprintf("cannot read %q as a time; accepted forms: %s", in, Forms)
}

// Parse reads a timestamp the way every face of weft accepts it. now is the
// reference for relative and partial forms; loc is the zone for input without
// one (the user's local zone in production). The result is in UTC.
//
// Input is case-insensitive; surrounding space is trimmed and runs of inner
// space count as one. A nil loc means UTC. Results outside the years
// 1..9999 (in UTC) are errors.
func Parse(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	in := strings.Join(strings.Fields(strings.ToLower(s)), " ")
	if in == "" {
		return time.Time{}, &Error{Input: s}
	}
	t, reason, ok := parse(in, now.In(loc), loc)
	if !ok {
		return time.Time{}, &Error{Input: s, Reason: reason}
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, &Error{Input: s, Reason: "the time is outside the years 1 to 9999"}
	}
	return t, nil
}

// parse dispatches on the shape of the normalised input. now is already in
// loc. A false ok with an empty reason means the input has no known shape.
func parse(in string, now time.Time, loc *time.Location) (t time.Time, reason string, ok bool) {
	switch {
	case in == "now":
		return now, "", true
	case in == "today" || strings.HasPrefix(in, "today "):
		return day(strings.TrimPrefix(in, "today"), now, 0, loc)
	case in == "yesterday" || strings.HasPrefix(in, "yesterday "):
		return day(strings.TrimPrefix(in, "yesterday"), now, -1, loc)
	case strings.HasPrefix(in, "-"):
		return relative(in[1:], now)
	case strings.HasSuffix(in, " ago"):
		return relative(strings.TrimSuffix(in, " ago"), now)
	case allDigits(in):
		if len(in) < 9 || len(in) > 11 {
			return time.Time{}, "", false
		}
		var n int64
		for i := 0; i < len(in); i++ {
			n = n*10 + int64(in[i]-'0')
		}
		return time.Unix(n, 0), "", true
	case len(in) >= 5 && allDigits(in[:4]) && in[4] == '-':
		return dateTime(in, loc)
	}
	if t, reason, ok, shaped := calendar(in, now, loc); shaped {
		return t, reason, ok
	}
	if in[0] >= '0' && in[0] <= '9' {
		c, rest, reason, ok := clock(in)
		if !ok {
			return time.Time{}, reason, false
		}
		if rest != "" {
			return time.Time{}, "", false
		}
		y, m, d := now.Date()
		return time.Date(y, m, d, c.h, c.min, c.sec, c.nsec, loc), "", true
	}
	return time.Time{}, "", false
}

// day reads "today", "yesterday" and their "[at] TIME" forms: offset is the
// calendar day relative to now (0 today, -1 yesterday), rest what followed
// the word. Calendar arithmetic in loc keeps the wall clock across DST.
func day(rest string, now time.Time, offset int, loc *time.Location) (time.Time, string, bool) {
	y, m, d := now.Date()
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, " "), "at ")
	if rest == "" {
		return time.Date(y, m, d+offset, 0, 0, 0, 0, loc), "", true
	}
	c, tail, reason, ok := clock(rest)
	if !ok {
		return time.Time{}, reason, false
	}
	if tail != "" {
		return time.Time{}, "", false
	}
	return time.Date(y, m, d+offset, c.h, c.min, c.sec, c.nsec, loc), "", true
}

// Bounds on relative amounts: a little over 10000 years, so that anything
// beyond is refused before the arithmetic could overflow.
const (
	maxDays = 4_000_000
	maxSecs = maxDays * 86400
	maxNum  = 1_000_000_000_000
)

// relative reads the amount in "-1h30m", "- 3 days", "2h ago",
// "1 hour 30 minutes ago", "an hour ago" and subtracts it from now. Days and
// weeks are calendar days in now's zone (so "-1d" keeps the wall clock
// across DST); hours, minutes and seconds are exact durations.
func relative(s string, now time.Time) (time.Time, string, bool) {
	var days, secs int64
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, "", false
	}
	for s != "" {
		var n int64
		switch {
		case strings.HasPrefix(s, "a "):
			n, s = 1, s[2:]
		case strings.HasPrefix(s, "an "):
			n, s = 1, s[3:]
		case s[0] >= '0' && s[0] <= '9':
			i := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if n > maxNum {
					return time.Time{}, "the amount is too large", false
				}
				n = n*10 + int64(s[i]-'0')
				i++
			}
			if n > maxNum {
				return time.Time{}, "the amount is too large", false
			}
			s = strings.TrimPrefix(s[i:], " ")
		default:
			return time.Time{}, "", false
		}
		i := 0
		for i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			i++
		}
		unit := s[:i]
		s = strings.TrimPrefix(s[i:], " ")
		switch unit {
		case "s", "sec", "secs", "second", "seconds":
			secs += n
		case "m", "min", "mins", "minute", "minutes":
			secs += n * 60
		case "h", "hr", "hrs", "hour", "hours":
			secs += n * 3600
		case "d", "day", "days":
			days += n
		case "w", "wk", "wks", "week", "weeks":
			days += n * 7
		case "":
			return time.Time{}, "a unit is missing (s, m, h, d or w)", false
		default:
			return time.Time{}, fmt.Sprintf("unknown unit %q (use s, m, h, d or w)", unit), false
		}
		if days > maxDays || secs > maxSecs {
			return time.Time{}, "the amount is too large", false
		}
	}
	t := now.AddDate(0, 0, -int(days))
	// A time.Duration holds about 292 years; subtract in steps.
	for secs > 0 {
		step := min(secs, 1<<32)
		t = t.Add(-time.Duration(step) * time.Second)
		secs -= step
	}
	return t, "", true
}

// dateTime reads "YYYY-MM-DD" optionally followed by "T" or a space, a time
// of day, and a zone (Z, UTC, GMT, ±hh, ±hhmm, ±hh:mm). Without a zone the
// time is in loc.
func dateTime(s string, loc *time.Location) (time.Time, string, bool) {
	y := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	s = s[5:]
	m, s, ok := number(s, 1, 2)
	if !ok || !strings.HasPrefix(s, "-") {
		return time.Time{}, "", false
	}
	d, s, ok := number(s[1:], 1, 2)
	if !ok {
		return time.Time{}, "", false
	}
	if m < 1 || m > 12 {
		return time.Time{}, fmt.Sprintf("month %d is out of range", m), false
	}
	if last := time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day(); d < 1 || d > last {
		return time.Time{}, fmt.Sprintf("day %d is out of range for %04d-%02d", d, y, m), false
	}
	if s == "" {
		return time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc), "", true
	}
	if s[0] != 't' && s[0] != ' ' {
		return time.Time{}, "", false
	}
	c, s, reason, ok := clock(s[1:])
	if !ok {
		return time.Time{}, reason, false
	}
	zone := loc
	if s != "" {
		z, reason, ok := offset(strings.TrimPrefix(s, " "))
		if !ok {
			return time.Time{}, reason, false
		}
		zone = z
	}
	return time.Date(y, time.Month(m), d, c.h, c.min, c.sec, c.nsec, zone), "", true
}

// offset reads a zone designator that is the whole of s.
func offset(s string) (*time.Location, string, bool) {
	switch s {
	case "z", "utc", "gmt":
		return time.UTC, "", true
	case "":
		return nil, "", false
	}
	sign := 1
	switch s[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return nil, "", false
	}
	rest := s[1:]
	if len(rest) < 2 || !allDigits(rest[:2]) {
		return nil, "", false
	}
	h, mins := atoi2(rest), 0
	rest = rest[2:]
	if rest != "" {
		rest = strings.TrimPrefix(rest, ":")
		if len(rest) != 2 || !allDigits(rest) {
			return nil, "", false
		}
		mins = atoi2(rest)
	}
	if h > 23 || mins > 59 {
		return nil, fmt.Sprintf("zone offset %s is out of range", s), false
	}
	return time.FixedZone("", sign*(h*3600+mins*60)), "", true
}

// clockTime is a time of day.
type clockTime struct{ h, min, sec, nsec int }

// clock reads a time of day at the start of s: "H[H]:MM[:SS[.fff]]",
// optionally followed by "am"/"pm", or "H[H]am"/"H[H]pm" (a space before
// am/pm is allowed). It returns what follows.
func clock(s string) (c clockTime, rest, reason string, ok bool) {
	h, s, ok := number(s, 1, 2)
	if !ok {
		return c, "", "", false
	}
	c.h = h
	colon := strings.HasPrefix(s, ":")
	if colon {
		if c.min, s, ok = number(s[1:], 2, 2); !ok {
			return c, "", "", false
		}
		if strings.HasPrefix(s, ":") {
			if c.sec, s, ok = number(s[1:], 2, 2); !ok {
				return c, "", "", false
			}
			if len(s) > 0 && (s[0] == '.' || s[0] == ',') {
				i := 1
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				digits := s[1:i]
				if len(digits) == 0 || len(digits) > 9 {
					return c, "", "", false
				}
				for k := 0; k < 9; k++ {
					c.nsec *= 10
					if k < len(digits) {
						c.nsec += int(digits[k] - '0')
					}
				}
				s = s[i:]
			}
		}
	}
	ampm := strings.TrimPrefix(s, " ")
	switch {
	case strings.HasPrefix(ampm, "am") || strings.HasPrefix(ampm, "pm"):
		if c.h < 1 || c.h > 12 {
			return c, "", fmt.Sprintf("hour %d is out of range for %s", c.h, ampm[:2]), false
		}
		c.h %= 12
		if ampm[0] == 'p' {
			c.h += 12
		}
		s = ampm[2:]
	case !colon:
		// A bare number is not a time of day.
		return c, "", "", false
	}
	if c.h > 23 {
		return c, "", fmt.Sprintf("hour %d is out of range", c.h), false
	}
	if c.min > 59 {
		return c, "", fmt.Sprintf("minute %d is out of range", c.min), false
	}
	if c.sec > 59 {
		return c, "", fmt.Sprintf("second %d is out of range", c.sec), false
	}
	return c, s, "", true
}

// number reads between lo and hi decimal digits at the start of s and
// returns their value and what follows. More than hi digits is not a match.
func number(s string, lo, hi int) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if i == hi {
			return 0, "", false
		}
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i < lo {
		return 0, "", false
	}
	return n, s[i:], true
}

// atoi2 is the value of the two ASCII digits at the start of s.
func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
