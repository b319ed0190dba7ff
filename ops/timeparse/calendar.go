package timeparse

import (
	"fmt"
	"strings"
	"time"
)

// The calendar forms: a month and a day ("Mar 4", "4 March", "march 4,
// 2026 10am") and a weekday ("monday", "fri 9am"), each optionally
// followed by "[at] TIME".

var months = map[string]time.Month{
	"jan": time.January, "january": time.January,
	"feb": time.February, "february": time.February,
	"mar": time.March, "march": time.March,
	"apr": time.April, "april": time.April,
	"may": time.May,
	"jun": time.June, "june": time.June,
	"jul": time.July, "july": time.July,
	"aug": time.August, "august": time.August,
	"sep": time.September, "sept": time.September, "september": time.September,
	"oct": time.October, "october": time.October,
	"nov": time.November, "november": time.November,
	"dec": time.December, "december": time.December,
}

var weekdays = map[string]time.Weekday{
	"mon": time.Monday, "monday": time.Monday,
	"tue": time.Tuesday, "tues": time.Tuesday, "tuesday": time.Tuesday,
	"wed": time.Wednesday, "wednesday": time.Wednesday,
	"thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "thursday": time.Thursday,
	"fri": time.Friday, "friday": time.Friday,
	"sat": time.Saturday, "saturday": time.Saturday,
	"sun": time.Sunday, "sunday": time.Sunday,
}

// calendar reads the calendar forms. shaped is false when the input is
// none of them, so the caller tries the others; otherwise ok and reason
// say whether it was read. A month and day without a year is in now's
// year; a weekday is the latest such day on or before now's day (today,
// if today is one).
func calendar(in string, now time.Time, loc *time.Location) (t time.Time, reason string, ok, shaped bool) {
	f := strings.Fields(strings.ReplaceAll(in, ",", " "))
	y, m, d := now.Date()
	var rest []string
	switch {
	case len(f) >= 1 && isWeekday(f[0]):
		back := (int(now.Weekday()) - int(weekdays[f[0]]) + 7) % 7
		d -= back
		rest = f[1:]
	case len(f) >= 2 && isMonth(f[0]):
		day, ok := dayNumber(f[1])
		if !ok {
			return time.Time{}, "", false, true
		}
		m, d, rest = months[f[0]], day, f[2:]
	case len(f) >= 2 && isMonth(f[1]):
		day, ok := dayNumber(f[0])
		if !ok {
			return time.Time{}, "", false, false // "3 mar…" is a calendar form only with a day first
		}
		m, d, rest = months[f[1]], day, f[2:]
	case len(f) == 1 && isMonth(f[0]):
		return time.Time{}, "a day is missing after the month (Mar 4)", false, true
	default:
		return time.Time{}, "", false, false
	}
	if !isWeekday(f[0]) {
		// An explicit year: four digits right after the day.
		if len(rest) > 0 && len(rest[0]) == 4 && allDigits(rest[0]) {
			y = atoi2(rest[0])*100 + atoi2(rest[0][2:])
			rest = rest[1:]
		}
		if last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day(); d < 1 || d > last {
			return time.Time{}, fmt.Sprintf("day %d is out of range for %s %04d", d, m, y), false, true
		}
	}
	if len(rest) > 0 && rest[0] == "at" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return time.Date(y, m, d, 0, 0, 0, 0, loc), "", true, true
	}
	c, tail, reason, ok := clock(strings.Join(rest, " "))
	if !ok {
		return time.Time{}, reason, false, true
	}
	if tail != "" {
		return time.Time{}, "", false, true
	}
	return time.Date(y, m, d, c.h, c.min, c.sec, c.nsec, loc), "", true, true
}

func isMonth(s string) bool   { _, ok := months[s]; return ok }
func isWeekday(s string) bool { _, ok := weekdays[s]; return ok }

// dayNumber reads a day of the month: one or two digits, with an
// ordinal suffix or without ("4", "4th", "21st").
func dayNumber(s string) (int, bool) {
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		if strings.HasSuffix(s, suffix) {
			s = strings.TrimSuffix(s, suffix)
			break
		}
	}
	if len(s) == 0 || len(s) > 2 || !allDigits(s) {
		return 0, false
	}
	n := int(s[0] - '0')
	if len(s) == 2 {
		n = atoi2(s)
	}
	return n, true
}
