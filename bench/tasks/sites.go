package main

import (
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// site serves the ten task sites of one run on loopback and records what the
// agent submitted or opened: the end state each task is checked against. The
// values an agent must read (balances, prices, codes) are drawn at random per
// run, so the driver can only know them from what a tool showed it.
type site struct {
	mu      sync.Mutex
	rnd     *rand.Rand
	events  map[string][]string // task → what the site recorded (logins, opened items, submissions)
	truth   map[string]string   // task → the value the agent must report
	deleted map[string]bool     // t7: users deleted
}

func newSite(seed uint64) *site {
	s := &site{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), events: map[string][]string{}, truth: map[string]string{}, deleted: map[string]bool{}}
	s.truth["t1"] = fmt.Sprintf("$%d,%03d.%02d", 1+s.rnd.IntN(90), s.rnd.IntN(1000), s.rnd.IntN(100))
	s.truth["t2"] = fmt.Sprintf("$%d.%02d", 10+s.rnd.IntN(900), s.rnd.IntN(100))
	s.truth["t4"] = strconv.Itoa(100 + s.rnd.IntN(9000))
	s.truth["t5"] = fmt.Sprintf("RPT-%04d-%s", s.rnd.IntN(10000), word(s.rnd))
	s.truth["t10"] = word(s.rnd) + "-" + word(s.rnd)
	return s
}

var words = []string{"amber", "birch", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper", "kestrel", "lantern", "meadow", "nectar", "onyx", "pebble", "quartz", "raven", "saffron", "tundra"}

func word(r *rand.Rand) string { return words[r.IntN(len(words))] }

func (s *site) record(task, ev string) {
	s.mu.Lock()
	s.events[task] = append(s.events[task], ev)
	s.mu.Unlock()
}

func (s *site) has(task, ev string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events[task] {
		if e == ev {
			return true
		}
	}
	return false
}

func (s *site) reset() {
	s.mu.Lock()
	s.events = map[string][]string{}
	s.deleted = map[string]bool{}
	s.mu.Unlock()
}

// chrome is the page chrome every site repeats (a header nav, a footer of
// links): what a whole snapshot carries on every page.
func chrome(title, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang=en><head><meta charset=utf-8><title>%s</title></head><body>
<header><nav aria-label="Main"><a href="/">Home</a> <a href="/products">Products</a> <a href="/pricing">Pricing</a> <a href="/blog">Blog</a> <a href="/support">Support</a> <a href="/account">Account</a></nav></header>
<main>%s</main>
<footer><nav aria-label="Footer"><a href="/about">About us</a> <a href="/careers">Careers</a> <a href="/press">Press</a> <a href="/privacy">Privacy policy</a> <a href="/terms">Terms of service</a> <a href="/contact">Contact</a></nav><p>© 2026 Example Corp. All rights reserved.</p></footer>
</body></html>`, html.EscapeString(title), body)
	return b.String()
}

func write(w http.ResponseWriter, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(page))
}

var productNames = []string{"Desk lamp", "Floor lamp", "Reading lamp", "Wall lamp", "Lamp shade", "Lamp bulb", "Clip lamp", "Table lamp", "Pendant lamp", "Arc lamp"}

func (s *site) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	// t1: sign in and read a value from the dashboard.
	mux.HandleFunc("/t1/login", func(w http.ResponseWriter, r *http.Request) {
		msg := ""
		if r.Method == http.MethodPost {
			r.ParseForm()
			if r.Form.Get("username") == "alice" && r.Form.Get("password") == "correct horse" {
				s.record("t1", "login")
				http.SetCookie(w, &http.Cookie{Name: "t1", Value: "ok", Path: "/t1"})
				http.Redirect(w, r, "/t1/dashboard", http.StatusSeeOther)
				return
			}
			msg = `<p role=alert>Wrong username or password.</p>`
		}
		write(w, chrome("Sign in", `<h1>Sign in</h1>`+msg+`<form method=post action="/t1/login">
<label>Username <input name=username autocomplete=username></label>
<label>Password <input name=password type=password></label>
<label><input type=checkbox name=remember> Remember me</label>
<button type=submit>Sign in</button></form><p><a href="/t1/forgot">Forgot your password?</a></p>`))
	})
	mux.HandleFunc("/t1/dashboard", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("t1"); err != nil || c.Value != "ok" {
			http.Redirect(w, r, "/t1/login", http.StatusSeeOther)
			return
		}
		var b strings.Builder
		b.WriteString(`<h1>Dashboard</h1><p>Welcome back, Alice.</p><section aria-label="Widgets">`)
		for i, n := range []string{"Open invoices", "Messages", "Tasks due", "Team members"} {
			fmt.Fprintf(&b, `<div class=card><h2>%s</h2><p>%d</p><a href="/t1/w%d">View all</a></div>`, n, 3+i*7, i)
		}
		fmt.Fprintf(&b, `<div class=card><h2>Account balance</h2><p>%s</p><a href="/t1/billing">Billing</a></div>`, s.truth["t1"])
		b.WriteString(`</section><section><h2>Recent activity</h2><ul>`)
		for i := 0; i < 12; i++ {
			fmt.Fprintf(&b, `<li>Invoice #%d was paid by customer %d <a href="/t1/inv/%d">Open</a></li>`, 4000+i, 100+i, i)
		}
		b.WriteString(`</ul></section>`)
		write(w, chrome("Dashboard", b.String()))
	})
	// t2: search, page 3 of the results, the 2nd hit's price.
	mux.HandleFunc("/t2/", func(w http.ResponseWriter, r *http.Request) {
		write(w, chrome("Shop", `<h1>Shop</h1><form role=search action="/t2/search"><input type=search name=q aria-label="Search products"><button>Search</button></form>
<h2>Featured</h2><ul><li><a href="/t2/p/900">Garden chair</a></li><li><a href="/t2/p/901">Coffee mug</a></li><li><a href="/t2/p/902">Wool blanket</a></li></ul>`))
	})
	mux.HandleFunc("/t2/search", func(w http.ResponseWriter, r *http.Request) {
		q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page < 1 {
			page = 1
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<h1>Results for “%s”</h1><form role=search action="/t2/search"><input type=search name=q aria-label="Search products" value="%s"><button>Search</button></form>`, html.EscapeString(q), html.EscapeString(q))
		if q != "lamp" {
			b.WriteString(`<p>No results.</p>`)
			write(w, chrome("Search", b.String()))
			return
		}
		fmt.Fprintf(&b, `<p>50 results, page %d of 5</p><ol class=results>`, page)
		for i := 0; i < 10; i++ {
			id := (page-1)*10 + i
			fmt.Fprintf(&b, `<li><a href="/t2/p/%d">%s %d</a><p>A %s with a brass finish, %d cm tall.</p></li>`, id, productNames[id%10], id+1, strings.ToLower(productNames[id%10]), 20+id)
		}
		b.WriteString(`</ol><nav aria-label="Pagination">`)
		for p := 1; p <= 5; p++ {
			if p == page {
				fmt.Fprintf(&b, `<span aria-current=page>%d</span> `, p)
			} else {
				fmt.Fprintf(&b, `<a href="/t2/search?q=lamp&amp;page=%d" aria-label="Page %d">%d</a> `, p, p, p)
			}
		}
		if page < 5 {
			fmt.Fprintf(&b, `<a href="/t2/search?q=lamp&amp;page=%d">Next</a>`, page+1)
		}
		b.WriteString(`</nav>`)
		write(w, chrome("Search results", b.String()))
	})
	mux.HandleFunc("/t2/p/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.PathValue("id"))
		s.record("t2", "open "+strconv.Itoa(id))
		price := fmt.Sprintf("$%d.%02d", 15+id*3, id%100)
		if id == 21 { // page 3, 2nd hit
			price = s.truth["t2"]
		}
		name := "Item"
		if id < 50 {
			name = fmt.Sprintf("%s %d", productNames[id%10], id+1)
		}
		write(w, chrome(name, fmt.Sprintf(`<h1>%s</h1><p>Price: %s</p><p>In stock. Ships in 2 days.</p><button>Add to cart</button><h2>Reviews</h2><p>No reviews yet.</p>`, name, price)))
	})
	// t3: an 8-field form whose first submit fails validation.
	mux.HandleFunc("/t3/form", func(w http.ResponseWriter, r *http.Request) {
		write(w, chrome("Shipping details", `<h1>Shipping details</h1>
<form id=f method=post action="/t3/submit" novalidate>
<label>Full name <input name=name></label>
<label>Email <input name=email type=email></label>
<label>Phone <input name=phone></label>
<label>Street <input name=street></label>
<label>City <input name=city></label>
<label>Postal code <input name=zip></label>
<label>Country <input name=country></label>
<label>Delivery notes <textarea name=notes></textarea></label>
<div id=err role=alert></div>
<button type=submit>Submit order</button></form>
<script>
document.getElementById('f').addEventListener('submit', (e) => {
  const phone = e.target.phone.value;
  if (!/^[0-9]{10}$/.test(phone)) {
    e.preventDefault();
    document.getElementById('err').textContent = 'Phone: enter exactly 10 digits, digits only.';
  }
});
</script>`))
	})
	mux.HandleFunc("/t3/submit", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		var kv []string
		for _, k := range []string{"name", "email", "phone", "street", "city", "zip", "country", "notes"} {
			kv = append(kv, k+"="+r.Form.Get(k))
		}
		s.record("t3", "submit "+strings.Join(kv, "&"))
		write(w, chrome("Thank you", `<h1>Thank you</h1><p>Your order is on its way.</p>`))
	})
	// t4: a value from a 200-row table.
	mux.HandleFunc("/t4/inventory", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<h1>Inventory</h1><table><thead><tr><th>SKU</th><th>Item</th><th>Warehouse</th><th>Quantity</th></tr></thead><tbody>`)
		for i := 1; i <= 200; i++ {
			q := strconv.Itoa((i * 37) % 500)
			if i == 137 {
				q = s.truth["t4"]
			}
			fmt.Fprintf(&b, `<tr><td>SKU-%05d</td><td>Widget %d</td><td>%s</td><td>%s</td></tr>`, 10000+i*7, i, []string{"North", "South", "East", "West"}[i%4], q)
		}
		b.WriteString(`</tbody></table>`)
		s.record("t4", "open")
		write(w, chrome("Inventory", b.String()))
	})
	// t5: a link that opens a new tab.
	mux.HandleFunc("/t5/news", func(w http.ResponseWriter, r *http.Request) {
		write(w, chrome("News", `<h1>Quarterly news</h1><p>Our quarterly results are in. Revenue grew and costs fell.</p>
<p><a href="/t5/report" target=_blank>Read the full report</a></p><p><a href="/t5/archive">Archive</a></p>`))
	})
	mux.HandleFunc("/t5/report", func(w http.ResponseWriter, r *http.Request) {
		s.record("t5", "open report")
		write(w, chrome("Full report", fmt.Sprintf(`<h1>Full report</h1><p>Report code: %s</p><p>Prepared by the finance team.</p>`, s.truth["t5"])))
	})
	// t6: an infinite list; load more until a named item appears, open it.
	mux.HandleFunc("/t6/feed", func(w http.ResponseWriter, r *http.Request) {
		write(w, chrome("Feed", `<h1>Latest items</h1><ul id=list></ul><button id=more>Load more</button>
<script>
let n = 0;
const names = ['Copper kettle','Oak table','Linen shirt','Steel pan','Glass vase','Clay pot','Silk scarf','Cork board','Tin box','Felt hat'];
function load() {
  const ul = document.getElementById('list');
  for (let i = 0; i < 15; i++, n++) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = '/t6/item/' + n;
    a.textContent = (n === 71 ? 'Vintage typewriter' : names[n % 10] + ' ' + n);
    li.appendChild(a);
    ul.appendChild(li);
  }
}
load();
document.getElementById('more').onclick = load;
</script>`))
	})
	mux.HandleFunc("/t6/item/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.record("t6", "open "+r.PathValue("id"))
		write(w, chrome("Item", `<h1>Item `+html.EscapeString(r.PathValue("id"))+`</h1><p>Details.</p>`))
	})
	// t7: accept a confirm dialog to delete a row.
	users := []string{"Alan Park", "Beth Moss", "Carol Diaz", "Dan Wu", "Eve Stone", "Finn Hale", "Gina Ross", "Hugo Lane"}
	mux.HandleFunc("/t7/users", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<h1>Users</h1><table><thead><tr><th>Name</th><th>Email</th><th>Role</th><th>Action</th></tr></thead><tbody>`)
		for _, u := range users {
			s.mu.Lock()
			gone := s.deleted[u]
			s.mu.Unlock()
			if gone {
				continue
			}
			mail := strings.ToLower(strings.ReplaceAll(u, " ", ".")) + "@example.com"
			fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>Member</td><td><button onclick="del(this, '%s')">Delete</button></td></tr>`, u, mail, u)
		}
		b.WriteString(`</tbody></table><p id=status role=status></p>
<script>
async function del(btn, name) {
  if (!confirm('Delete ' + name + '?')) return;
  await fetch('/t7/delete', {method: 'POST', body: name});
  btn.closest('tr').remove();
  document.getElementById('status').textContent = name + ' was deleted.';
}
</script>`)
		write(w, chrome("Users", b.String()))
	})
	mux.HandleFunc("/t7/delete", func(w http.ResponseWriter, r *http.Request) {
		var buf [256]byte
		n, _ := r.Body.Read(buf[:])
		name := string(buf[:n])
		s.mu.Lock()
		s.deleted[name] = true
		s.mu.Unlock()
		s.record("t7", "delete "+name)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"deleted":true}`))
	})
	// t8: a form inside an iframe.
	mux.HandleFunc("/t8/contact", func(w http.ResponseWriter, r *http.Request) {
		write(w, chrome("Contact", `<h1>Contact us</h1><p>Use the form below; we answer within a day.</p>
<iframe title="Contact form" src="/t8/frame" width=600 height=400></iframe>`))
	})
	mux.HandleFunc("/t8/frame", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r.ParseForm()
			s.record("t8", "send name="+r.Form.Get("name")+"&email="+r.Form.Get("email")+"&message="+r.Form.Get("message"))
			write(w, `<!doctype html><title>Sent</title><p>Thanks, your message was sent.</p>`)
			return
		}
		write(w, `<!doctype html><title>Form</title><form method=post>
<label>Your name <input name=name></label><br>
<label>Your email <input name=email></label><br>
<label>Message <textarea name=message></textarea></label><br>
<button type=submit>Send message</button></form>`)
	})
	// t9: a widget inside a shadow root.
	mux.HandleFunc("/t9/cart", func(w http.ResponseWriter, r *http.Request) {
		write(w, chrome("Cart", `<h1>Your cart</h1><p>Espresso beans, 1 kg</p><qty-stepper></qty-stepper><p id=saved role=status></p>
<script>
customElements.define('qty-stepper', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: 'open'});
    root.innerHTML = '<button id=dec aria-label="Decrease quantity">−</button> <span id=v role=status aria-label="Quantity">1</span> <button id=inc aria-label="Increase quantity">+</button> <button id=save>Save quantity</button>';
    let v = 1;
    const show = () => { root.getElementById('v').textContent = String(v); };
    root.getElementById('dec').onclick = () => { if (v > 1) v--; show(); };
    root.getElementById('inc').onclick = () => { v++; show(); };
    root.getElementById('save').onclick = async () => {
      await fetch('/t9/save', {method: 'POST', body: String(v)});
      document.getElementById('saved').textContent = 'Saved: quantity ' + v;
    };
  }
});
</script>`))
	})
	mux.HandleFunc("/t9/save", func(w http.ResponseWriter, r *http.Request) {
		var buf [16]byte
		n, _ := r.Body.Read(buf[:])
		s.record("t9", "save "+string(buf[:n]))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"saved":true}`))
	})
	// t10: the 3rd section of a long article.
	mux.HandleFunc("/t10/article", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<article><h1>A field guide to northern rivers</h1><p>By the editors. 14 minute read.</p>`)
		titles := []string{"Where the rivers begin", "The spring thaw", "Life under the ice", "Bridges and fords", "Fishing rights", "The long summer", "Rivers in the archive"}
		for si, t := range titles {
			fmt.Fprintf(&b, `<h2>%s</h2>`, t)
			for p := 0; p < 5; p++ {
				if si == 2 && p == 0 {
					fmt.Fprintf(&b, `<p>Under the ice the water keeps moving, and the survey team's code word for this stretch is %s.</p>`, s.truth["t10"])
					continue
				}
				fmt.Fprintf(&b, `<p>Paragraph %d of the section on %s: the river runs cold and clear past the old mill, through birch woods and over granite shelves, where the current slows and the banks widen into meadows that flood each spring.</p>`, p+1, strings.ToLower(t))
			}
		}
		b.WriteString(`</article>`)
		s.record("t10", "open")
		write(w, chrome("Northern rivers", b.String()))
	})
	return mux
}
