package main

import (
	"slices"
	"strings"
	"testing"
)

// TestRunPhrasal checks the table of phrasal verbs on a small dictionary in WordNet's format: a phrasal verb lists
// the words of its first phrasalSenses senses, a synonym of two words by its first, but not its own verb; a sense
// of the phrasal verb alone, the words of the sense it is a kind of; a verb of one word or of three, and a phrasal
// verb whose senses hold nothing else, give no line.
func TestRunPhrasal(t *testing.T) {
	files := map[string]string{
		"index.verb": "  1 licence header line\n" +
			"punch_in v 1 1 @ 1 1 00000100  \n" +
			"work_out v 6 1 @ 6 4 00000200 00000300 00000400 00000500 00000600 00000700  \n" +
			"work v 1 1 @ 1 1 00000200  \n" +
			"make_up_one's_mind v 1 1 @ 1 0 00000800  \n" +
			"knock_out v 1 1 @ 1 0 00000800  \n" +
			"sign_up v 1 1 @ 1 0 00000900  \n",
		"data.verb": "00000100 41 v 03 clock_in 0 punch_in 0 clock_on 0 000 | register one's arrival at work  \n" +
			"00000200 31 v 02 work_out 0 work_up 0 000 | come up with  \n" +
			"00000300 30 v 01 work_out 0 000 | happen in a certain way  \n" +
			"00000400 36 v 02 elaborate 0 work_out 0 000 | work out in detail  \n" +
			"00000500 29 v 02 exercise 0 work_out 0 000 | do physical exercise  \n" +
			"00000600 31 v 02 figure 0 work_out 0 000 | make a mathematical calculation  \n" +
			"00000700 31 v 02 lick 0 work_out 0 000 | find the solution  \n" +
			"00000800 31 v 01 knock_out 0 000 | eliminate  \n" +
			"00000900 33 v 01 sign_up 0 001 @ 00001000 v 0000 | join a club  \n" +
			"00001000 41 v 02 join 0 fall_in 0 000 | become part of  \n",
	}
	got := generateTable(t, files, runPhrasal)
	want := []string{"punch_in clock", "work_out elaborate exercise", "sign_up join fall"}
	if !slices.Equal(got, want) {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
