package dashboard

import (
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// chart is a bar chart drawn as inline SVG by the templates, with its numbers also in a table for screen readers.
type chart struct {
	Title string
	// Heading names the bars' labels in the table.
	Heading       string
	Width, Height int
	Max           int
	Bars          []bar
}

// bar is one bar of a chart, positioned.
type bar struct {
	Label  string
	Value  int
	X, Y   int
	W, H   int
	LabelX int
	// ShowLabel is set on the bars whose label is drawn under the axis (not all fit).
	ShowLabel bool
	// Class colours the bar.
	Class string
}

const (
	chartWidth  = 720
	chartHeight = 180
	chartBottom = 20 // room for the labels
	chartMargin = 24 // room for the outer labels' halves
)

// dailyCharts draws conversations and messages per UTC day of the range, days without any at zero.
func dailyCharts(o store.Overview, from time.Time, days int, lang string) (chart, chart) {
	byDay := map[string]store.DayCount{}
	for _, d := range o.Daily {
		byDay[d.Date] = d
	}
	labels := make([]string, days)
	convs, msgs := make([]int, days), make([]int, days)
	for i := range days {
		day := from.AddDate(0, 0, i)
		labels[i] = day.Format("01-02")
		if lang == "de" {
			labels[i] = day.Format("02.01.")
		}
		c := byDay[day.Format(time.DateOnly)]
		convs[i], msgs[i] = c.Conversations, c.Messages
	}
	day := translate(lang, "Day")
	return bars(translate(lang, "Conversations a day"), day, labels, convs, "c"), bars(translate(lang, "Messages a day"), day, labels, msgs, "m")
}

// answerChart compares answered and unanswered replies.
func answerChart(o store.Overview, lang string) chart {
	c := bars(translate(lang, "Replies"), translate(lang, "Reply"), []string{translate(lang, "answered"), translate(lang, "unanswered")},
		[]int{o.AnsweredMessages, o.UnansweredMessages}, "a")
	c.Bars[1].Class = "u"
	for i := range c.Bars {
		c.Bars[i].ShowLabel = true
	}
	return c
}

func bars(title, heading string, labels []string, values []int, class string) chart {
	c := chart{Title: title, Heading: heading, Width: chartWidth, Height: chartHeight, Max: 1}
	for _, v := range values {
		c.Max = max(c.Max, v)
	}
	n := len(values)
	slot := (chartWidth - 2*chartMargin) / max(n, 1)
	every := max(1, n/10) // at most about ten labels
	plot := chartHeight - chartBottom
	for i, v := range values {
		h := v * (plot - 4) / c.Max
		if v > 0 {
			h = max(h, 2)
		}
		x := chartMargin + i*slot + slot/8
		c.Bars = append(c.Bars, bar{Label: labels[i], Value: v, X: x, Y: plot - h, W: max(1, slot*3/4), H: h,
			LabelX: chartMargin + i*slot + slot/2, ShowLabel: i%every == 0, Class: class})
	}
	return c
}
