package content

import (
	"fmt"
	"strings"
	"testing"
)

// serviceSections is a service page's sections as trafilatura renders
// them: a heading over one or two short sentences each (no prose block of
// proseMinTokens words).
var serviceSections = []string{
	"## Same-day repairs", "Our technicians fix most boilers on the first visit.",
	"## Fixed prices", "You get a quote before any work starts, with no call-out fee.",
	"## Annual servicing", "A yearly check keeps the warranty valid and the bills low.",
	"## Emergency line", "Call us at any hour when the heating fails in winter.",
	"## Landlord certificates", "We issue gas safety records for rented homes within a day.",
	"## Local engineers", "Every engineer lives within twenty minutes of the homes we serve.",
}

// TestMergeKeepsSections: when trafilatura's answer is a page of short
// sections and readability kept only four of six, the merge keeps every
// section (the intersection would cut the page to readability's four);
// a link list after the last section both found is still left out.
func TestMergeKeepsSections(t *testing.T) {
	links := "- [Home](/)\n- [Blog](/blog)\n- [Careers](/jobs)\n- [Contact](/contact)"
	primary := strings.Join(append(append([]string{}, serviceSections...), links), "\n\n")
	secondary := strings.Join(serviceSections[:8], "\n\n")
	got := mergeExtractions(primary, secondary)
	for _, s := range serviceSections {
		if !strings.Contains(got, s) {
			t.Errorf("%q lost from the sections answer:\n%s", s, got)
		}
	}
	if strings.Contains(got, "[Careers]") {
		t.Errorf("the trailing link list was kept:\n%s", got)
	}
	// A tail of titles (the teasers of other pages) is left out too.
	var titles []string
	for i := range 6 {
		titles = append(titles, fmt.Sprintf("**Boiler prices in town number %d**", i))
	}
	got = mergeExtractions(primary[:strings.Index(primary, "- [Home]")]+strings.Join(titles, "\n\n"), strings.Join(serviceSections, "\n\n"))
	if strings.Contains(got, "town number") {
		t.Errorf("the trailing list of titles was kept:\n%s", got)
	}
}

// articleParas are article prose paragraphs (proseMinTokens words or more).
var articleParas = []string{
	"The council approved the new tram line on Tuesday after a debate that lasted most of the afternoon and ended with a narrow vote in favour of the eastern route.",
	"Supporters said the line would cut journey times for thousands of commuters, while opponents warned that the budget had already grown twice since the plan was first drafted.",
	"Construction is due to start next spring and the first trams should run within four years, according to the timetable the transport authority published after the vote.",
	"Residents along the route will be consulted again on the position of the stops, and the authority promised to publish the noise studies before the works begin.",
}

// TestMergeSectionRuns: in an article, a run of more than maxPrimaryRun
// trafilatura-only blocks between two blocks both found is a section
// readability dropped and is kept; a run of links of that length, and a
// short box at the end of the article, are not.
func TestMergeSectionRuns(t *testing.T) {
	section := serviceSections[:6] // three headings, three sentences
	primary := strings.Join(append(append(append([]string{}, articleParas[:2]...), section...), articleParas[2:]...), "\n\n")
	secondary := strings.Join(articleParas, "\n\n")
	got := mergeExtractions(primary, secondary)
	for _, s := range section {
		if !strings.Contains(got, s) {
			t.Errorf("%q of the dropped section lost:\n%s", s, got)
		}
	}
	linkRun := []string{"[Tram map](/map)", "[Timetables](/times)", "[Fares](/fares)", "[Roadworks](/works)", "[Contact](/contact)"}
	primary = strings.Join(append(append(append([]string{}, articleParas[:2]...), linkRun...), articleParas[2:]...), "\n\n")
	if got := mergeExtractions(primary, secondary); strings.Contains(got, "[Fares]") {
		t.Errorf("a run of links was kept:\n%s", got)
	}
	box := []string{"## Get the morning briefing", "Sign up and the day's top stories reach your inbox before breakfast."}
	primary = strings.Join(append(append([]string{}, articleParas...), box...), "\n\n")
	if got := mergeExtractions(primary, secondary); strings.Contains(got, "morning briefing") {
		t.Errorf("the newsletter box at the end of an article was kept:\n%s", got)
	}
}

// TestRecordsSideSection: an answer holding none of a page's records is a
// side section (readability's answer, covering them, is used) when it is
// not article prose; an article with none of them (teaser cards below it)
// stands.
func TestRecordsSideSection(t *testing.T) {
	page, posts := threadPage(6, func(s string) string { return s })
	r := findRecords(parsePage(t, page))
	if r == nil {
		t.Fatal("no records found")
	}
	all := strings.Join(posts, "\n\n")
	side := "## Sort by\n\nNewest first\n\n## Filter\n\nOnly unread threads"
	if !r.sideSection(side, side, all) {
		t.Errorf("a side section of short lines is not taken for one")
	}
	article := strings.Join(articleParas, "\n\n")
	if r.sideSection(article, article, all) {
		t.Errorf("an article outside the records is taken for a side section")
	}
	if r.sideSection(side, side, posts[0]) {
		t.Errorf("readability's answer covering one record of six replaced the answer")
	}
	var none *records
	if none.sideSection(side, side, all) {
		t.Errorf("a page without records has side sections")
	}
}
