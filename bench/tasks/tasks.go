package main

import (
	"fmt"
	"regexp"
	"strings"
)

// task is one scripted task: the driver's steps (reading each result and
// choosing the next call from what it shows) and the site-side check of
// the end state.
type task struct {
	id, title string
	run       func(a *agent, base string) string // the answer the agent reports ("" for action tasks)
	check     func(s *site, answer string) bool
}

// valueAfter returns what follows label in text up to the end of its line
// (a snapshot line `- paragraph: Price: $12.00` or `text: …`), trimmed of
// quotes and markup the snapshot adds.
func valueAfter(text, label string) string {
	var rest string
	for _, l := range strings.Split(clean(text), "\n") {
		if i := strings.Index(l, label); i >= 0 && isItem(l) {
			rest = l[i+len(label):]
			break
		}
	}
	if j := strings.IndexAny(rest, "\n\""); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "\\"))
}

// lineAfter returns the first line after the line that contains anchor
// whose text matches re (the value in a card under its heading, a table
// row's cell), and the submatch 1 of re.
func lineAfter(text, anchor string, re *regexp.Regexp, within int) string {
	lines := strings.Split(clean(text), "\n")
	for i, l := range lines {
		if !strings.Contains(l, anchor) || !isItem(l) {
			continue
		}
		// The anchor's line and the next few, as one text (a row whose
		// cells are lines of their own, a card's heading and value).
		rest := l[strings.Index(l, anchor)+len(anchor):] + "\n" + strings.Join(lines[i+1:min(len(lines), i+1+within)], "\n")
		if m := re.FindStringSubmatch(rest); m != nil {
			return m[1]
		}
	}
	return ""
}

// isItem reports whether l is a snapshot line (or a delta's), not a
// result's own text.
func isItem(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && strings.ContainsAny(t[:1], "-+~")
}

// attrRe matches the [ref=…], [level=…], [cursor=…], [active] marks a
// snapshot line carries.
var attrRe = regexp.MustCompile(`\[[a-z]+(?:=[^\]]*)?\]`)

// clean drops the marks of snapshot lines, keeping roles, names and text.
func clean(text string) string { return attrRe.ReplaceAllString(text, "") }

// headings returns the names of the headings of level in text, in order.
func headings(text string, level int) []string {
	re := regexp.MustCompile(`heading "((?:[^"\\]|\\.)*)".*\[level=` + fmt.Sprint(level) + `\]`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// section returns the lines after heading up to the next heading.
func section(text, heading string) string {
	lines := strings.Split(text, "\n")
	var out []string
	in := false
	for _, l := range lines {
		if strings.Contains(l, `heading "`) {
			if in {
				break
			}
			in = strings.Contains(l, `heading "`+heading+`"`)
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var moneyRe = regexp.MustCompile(`(\$[0-9][0-9,]*\.[0-9]{2})`)

func tasks() []task {
	return []task{
		{"t1", "sign in, read the dashboard's account balance", func(a *agent, base string) string {
			a.scoped("Username").call(a.srv.ad.navigate(base + "/t1/login"))
			user := a.ensure("textbox", "^Username", "")
			pass := a.ensure("textbox", "^Password", "")
			if user == "" || pass == "" {
				a.fail("no username/password field")
				return ""
			}
			a.fillOrType([]field{{user, "Username", "alice"}, {pass, "Password", "correct horse"}})
			btn := a.ensure("button", "^Sign in$", "")
			a.scoped("Account balance").call(a.srv.ad.click(btn, "Sign in button"))
			return lineAfter(a.lookFor("Account balance"), "Account balance", moneyRe, 4)
		}, func(s *site, ans string) bool { return s.has("t1", "login") && ans == s.truth["t1"] }},

		{"t2", "search, page 3 of the results, open the 2nd hit, read its price", func(a *agent, base string) string {
			a.scoped("Search products").call(a.srv.ad.navigate(base + "/t2/"))
			box := a.ensure("searchbox", "^Search products", "")
			if box == "" {
				a.fail("no search box")
				return ""
			}
			a.typeSubmit(box, "Search products", "lamp", "Page 3")
			p3 := a.ensureQ("link", "^(Page )?3$", "", "Page 3")
			if p3 == "" {
				a.fail("no link to page 3")
				return ""
			}
			a.call(a.srv.ad.click(p3, "Page 3 link"))
			if !strings.Contains(a.lookFor("page 3 of"), "page 3 of") {
				a.fail("not on page 3")
				return ""
			}
			refs, names := findAll(a.current(), "link", regexp.MustCompile(`(?i)lamp`))
			if len(refs) < 2 {
				a.fail("fewer than 2 hits")
				return ""
			}
			a.scoped("Price:").call(a.srv.ad.click(refs[1], names[1]+" link"))
			return lineAfter(a.lookFor("Price:"), "Price:", moneyRe, 1)
		}, func(s *site, ans string) bool { return s.has("t2", "open 21") && ans == s.truth["t2"] }},

		{"t3", "fill an 8-field form, fix the field the first submit rejects, submit", func(a *agent, base string) string {
			a.scoped("Full name").call(a.srv.ad.navigate(base + "/t3/form"))
			data := [][2]string{{"Full name", "Ada Lovelace"}, {"Email", "ada@example.com"}, {"Phone", "(555) 123-4567"}, {"Street", "12 Analytical Way"},
				{"City", "London"}, {"Postal code", "NW1 6XE"}, {"Country", "United Kingdom"}, {"Delivery notes", "Leave at the door"}}
			var fs []field
			for _, d := range data {
				ref := a.ensure("textbox", "^"+regexp.QuoteMeta(d[0]), "")
				if ref == "" {
					a.fail("no field %q", d[0])
					return ""
				}
				fs = append(fs, field{ref, d[0], d[1]})
			}
			a.fillOrType(fs)
			submit := a.ensure("button", "^Submit order$", "")
			a.call(a.srv.ad.click(submit, "Submit order button"))
			// The page says which field is wrong and how: in the result's
			// delta when it showed one, else in a look at the page.
			msg := clean(a.last.delta)
			if msg == "" || !a.fresh {
				msg = clean(a.current())
			}
			for _, f := range fs {
				if strings.Contains(msg, f.name+": ") && strings.Contains(msg, "digits only") {
					a.call(a.srv.ad.typeText(f.ref, regexp.MustCompile(`[^0-9]`).ReplaceAllString(f.text, ""), f.name+" field"))
				}
			}
			a.scoped("Thank you").call(a.srv.ad.click(submit, "Submit order button"))
			a.lookFor("Thank you")
			return ""
		}, func(s *site, _ string) bool {
			return s.has("t3", "submit name=Ada Lovelace&email=ada@example.com&phone=5551234567&street=12 Analytical Way&city=London&zip=NW1 6XE&country=United Kingdom&notes=Leave at the door")
		}},

		{"t4", "read Widget 137's quantity from a 200-row table", func(a *agent, base string) string {
			a.scoped("Widget 137").call(a.srv.ad.navigate(base + "/t4/inventory"))
			text := a.lookFor("Widget 137")
			// The row: SKU, item, warehouse, quantity; the quantity is the
			// number after the warehouse.
			return lineAfter(text, "Widget 137", regexp.MustCompile(`(?:North|South|East|West)\D*?([0-9]+)`), 4)
		}, func(s *site, ans string) bool { return s.has("t4", "open") && ans == s.truth["t4"] }},

		{"t5", "follow a link that opens a new tab, read the report code", func(a *agent, base string) string {
			a.scoped("Read the full report").call(a.srv.ad.navigate(base + "/t5/news"))
			l := a.ensure("link", "^Read the full report$", "")
			if l == "" {
				a.fail("no report link")
				return ""
			}
			v := a.scoped("Report code:").call(a.srv.ad.click(l, "Read the full report link"))
			if !strings.Contains(v.raw, "Report code") {
				// The new tab is listed but not current: switch to it.
				if tool, args, ok := a.srv.ad.selectTab(1); ok && strings.Contains(v.raw, "Full report") {
					a.call(tool, args)
				}
			}
			return valueAfter(a.lookFor("Report code:"), "Report code:")
		}, func(s *site, ans string) bool { return s.has("t5", "open report") && ans == s.truth["t5"] }},

		{"t6", "load more items of a list until “Vintage typewriter” appears, open it", func(a *agent, base string) string {
			a.scoped("Load more").call(a.srv.ad.navigate(base + "/t6/feed"))
			for i := 0; i < 10; i++ {
				if ref := a.probe("link", "Vintage typewriter"); ref != "" {
					a.call(a.srv.ad.click(ref, "Vintage typewriter link"))
					return ""
				}
				more := a.ensure("button", "^Load more$", "")
				if more == "" {
					a.fail("no Load more button")
					return ""
				}
				a.scoped("Vintage typewriter").call(a.srv.ad.click(more, "Load more button"))
			}
			a.fail("item never appeared")
			return ""
		}, func(s *site, _ string) bool { return s.has("t6", "open 71") }},

		{"t7", "delete Carol Diaz's row, accepting the confirm dialog", func(a *agent, base string) string {
			a.scoped("Carol Diaz").call(a.srv.ad.navigate(base + "/t7/users"))
			del := a.ensure("button", "^Delete$", "Carol Diaz")
			if del == "" {
				a.fail("no Delete button in Carol Diaz's row")
				return ""
			}
			v := a.call(a.srv.ad.click(del, "Delete button in Carol Diaz's row"))
			if strings.Contains(strings.ToLower(v.raw), "dialog") {
				// Accept only the confirmation of this row's deletion.
				ok := strings.Contains(v.raw, "Delete Carol Diaz?")
				a.call(a.srv.ad.dialog(ok))
				if !ok {
					a.fail("the dialog asks about another row")
					return ""
				}
			}
			a.lookFor("was deleted")
			return ""
		}, func(s *site, _ string) bool {
			return s.has("t7", "delete Carol Diaz") && len(s.events["t7"]) == 1
		}},

		{"t8", "fill and send the contact form inside an iframe", func(a *agent, base string) string {
			a.scoped("Your name").call(a.srv.ad.navigate(base + "/t8/contact"))
			var fs []field
			for _, d := range [][2]string{{"Your name", "Grace Hopper"}, {"Your email", "grace@example.com"}, {"Message", "Please call me back."}} {
				ref := a.ensure("textbox", "^"+d[0], "")
				if ref == "" {
					a.fail("no field %q", d[0])
					return ""
				}
				fs = append(fs, field{ref, d[0], d[1]})
			}
			a.fillOrType(fs)
			send := a.ensure("button", "^Send message$", "")
			a.call(a.srv.ad.click(send, "Send message button"))
			return ""
		}, func(s *site, _ string) bool {
			return s.has("t8", "send name=Grace Hopper&email=grace@example.com&message=Please call me back.")
		}},

		{"t9", "set the quantity stepper (in a shadow root) to 3 and save", func(a *agent, base string) string {
			a.scoped("quantity").call(a.srv.ad.navigate(base + "/t9/cart"))
			inc := a.ensure("button", "^Increase quantity$", "")
			if inc == "" {
				a.fail("no Increase quantity button")
				return ""
			}
			a.call(a.srv.ad.click(inc, "Increase quantity button"))
			a.call(a.srv.ad.click(inc, "Increase quantity button"))
			save := a.ensure("button", "^Save quantity$", "")
			a.call(a.srv.ad.click(save, "Save quantity button"))
			return ""
		}, func(s *site, _ string) bool { return s.has("t9", "save 3") }},

		{"t10", "read the 3rd section of a long article", func(a *agent, base string) string {
			a.call(a.srv.ad.navigate(base + "/t10/article"))
			// The 3rd section's heading, then its text up to the next one.
			h2 := headings(a.current(), 2)
			if len(h2) < 3 {
				a.fail("fewer than 3 sections")
				return ""
			}
			return section(a.lookFor(h2[2]), h2[2])
		}, func(s *site, ans string) bool {
			return s.has("t10", "open") && strings.Contains(ans, "code word for this stretch is "+s.truth["t10"]) &&
				strings.Contains(ans, "Paragraph 5 of the section on life under the ice") && !strings.Contains(ans, "bridges")
		}},
	}
}

// fillOrType fills fields in one call where the side can, else one call each.
func (a *agent) fillOrType(fs []field) {
	if tool, args, ok := a.srv.ad.fill(fs); ok {
		a.call(tool, args)
		return
	}
	for _, f := range fs {
		a.call(a.srv.ad.typeText(f.ref, f.text, f.name+" field"))
	}
}

// probe returns the ref of a link or button named name if the page has it
// now: from what the agent has read, else from a search where the side has
// one (no snapshot: the caller acts to change the page otherwise).
func (a *agent) probe(role, name string) string {
	re := regexp.MustCompile("^" + regexp.QuoteMeta(name) + "$")
	if ref := findIn(a.known(), role, re, ""); ref != "" {
		return ref
	}
	if a.fresh && (!a.partial || a.searched[name]) {
		return "" // the page is known whole, or was searched and every change since was shown
	}
	if tool, args, ok := a.srv.ad.find(name); ok {
		v := a.call(tool, args)
		if a.searched == nil {
			a.searched = map[string]bool{}
		}
		a.searched[name] = true
		return findIn(v.found, role, re, "")
	}
	return findIn(a.current(), role, re, "")
}

// typeSubmit types text into a field and presses Enter.
func (a *agent) typeSubmit(ref, name, text, q string) {
	if tool, args, ok := a.srv.ad.submitType(ref, text, name+" field"); ok {
		a.scoped(q).call(tool, args)
		return
	}
	a.call(a.srv.ad.typeText(ref, text, name+" field"))
	a.scoped(q).call(a.srv.ad.press("Enter"))
}
