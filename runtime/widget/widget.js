/* Parley chat widget. Plain JavaScript, no dependencies; rendered in a shadow root. Served by the runtime at
   /widget.js, which writes its public API address into API below. Embed:
   <script src="https://chat.example.com/widget.js" data-api-key="pk_..." data-merchant-id="acme" async></script> */
(function () {
  "use strict";
  var API = "__PARLEY_API_URL__";
  var script = document.currentScript;
  if (!script) return;
  var key = script.getAttribute("data-api-key") || "";
  var merchant = script.getAttribute("data-merchant-id") || "";
  var api = (script.getAttribute("data-api-url") || (API.indexOf("__") === 0 ? new URL(script.src).origin : API)).replace(/\/+$/, "");
  // The dashboard's live preview: its calls go to the dashboard's preview endpoints (data-preview) with the owner's
  // session cookie and CSRF token instead of a key; nothing is stored, so no contact form is offered.
  var preview = script.getAttribute("data-preview") || "";
  var csrf = script.getAttribute("data-csrf") || "";

  var TEXTS = {
    en: {
      open: "Open chat", close: "Close chat", title: "Chat with us", greeting: "Hi! How can I help?",
      placeholder: "Type your question", send: "Send", fresh: "New conversation", typing: "The assistant is typing",
      sources: "Sources", suggested: "These pages may help:", you: "You", bot: "Assistant", retry: "Retry",
      rate_limited: "You are sending messages too quickly. Please wait a moment and retry.",
      conversation_quota_exceeded: "The assistant cannot start new conversations right now. Please contact the shop directly.",
      conversation_rate_limited: "Too many new conversations were started from here. Please continue your current conversation or retry later.",
      origin_not_allowed: "This chat is not enabled on this website.",
      merchant_suspended: "This chat is not available at the moment.",
      offline: "You seem to be offline. Check your connection and retry.",
      failed: "Something went wrong. Please retry.",
      lead: "Leave your contact details", lead_intro: "We will get back to you. Please give an email address or a phone number.",
      name: "Name", email: "Email", phone: "Phone", message: "Message", consent: "I agree to be contacted about my question",
      lead_send: "Send details", thanks: "Thank you! We will get back to you soon.",
      need_contact: "Please give an email address or a phone number.", need_consent: "Please agree to be contacted so we can reply.",
      bad_email: "Please check the email address.", bad_phone: "Please check the phone number.",
      validation_failed: "Please check your details.", cut: "This answer was cut short.",
      person: "Talk to a person", agent: "{a} from {s}", team: "The {s} team",
      helpful: "Helpful", not_helpful: "Not helpful", reason: "What was wrong? (optional)",
      rated: "Thank you for your feedback.", csat: "How would you rate your last conversation?",
      csat_low: "Very dissatisfied", csat_high: "Very satisfied", skip: "Skip"
    }
  };
  // The languages whose texts the runtime serves at /widget/{lang}.json (runtime/widget/texts): a visitor's is
  // fetched once its language is known.
  var LANGS = ["ar", "de", "es", "fr", "he", "it", "nl", "pl", "pt"];
  var RTL = ["ar", "he", "fa", "ur"];

  var CSS = ":host{all:initial}[hidden]{display:none!important}*{box-sizing:border-box;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}" +
    ".l{position:fixed;bottom:20px;right:20px;z-index:2147483000;width:56px;height:56px;border:0;border-radius:50%;background:var(--c);color:#fff;cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.25)}" +
    ".left .l,.left .p{right:auto;left:20px}.l svg{width:26px;height:26px;fill:currentColor}" +
    ".p{position:fixed;bottom:88px;right:20px;z-index:2147483000;width:min(380px,calc(100vw - 40px));height:min(560px,calc(100vh - 120px));display:flex;flex-direction:column;background:#fff;color:#1f2328;border-radius:12px;box-shadow:0 8px 30px rgba(0,0,0,.25);overflow:hidden}" +
    ".p[hidden]{display:none}header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--c);color:#fff}" +
    "header h2{flex:1;margin:0;font-size:15px;font-weight:600}header button{background:transparent;border:0;color:#fff;cursor:pointer;padding:4px 6px;border-radius:6px}" +
    "button:focus-visible,textarea:focus-visible,input:focus-visible,a:focus-visible,.thx:focus-visible{outline:2px solid #2563eb;outline-offset:2px}" +
    ".log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px;background:#f6f8fa}" +
    ".m{max-width:85%;padding:8px 11px;border-radius:10px;white-space:pre-wrap;word-wrap:break-word}" +
    ".bot{align-self:flex-start;background:#fff;border:1px solid #d0d7de}.you{align-self:flex-end;background:var(--c);color:#fff}" +
    ".bot{white-space:normal}.tx strong{font-weight:600}.tx em{font-style:italic}.tx a{color:#0969da}.tx p,.tx ul,.tx ol{margin:0 0 6px}.tx>:last-child{margin-bottom:0}.tx ul,.tx ol{padding-left:20px}" +
    ".ci{vertical-align:top;font-size:10px;line-height:1.4;margin-left:2px}.ci a{padding:0 4px;border-radius:7px;background:#ddf4ff;color:#0969da;text-decoration:none}" +
    ".src{margin:6px 0 0;padding:0;list-style:none;font-size:12px}ol.src{list-style:decimal;padding-left:18px}.src a{color:#0969da}.sg{margin:8px 0 0;font-size:12px;color:#57606a}" +
    ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}" +
    ".t[hidden]{display:none}.t{align-self:flex-start;display:flex;gap:4px;padding:10px}.t i{width:7px;height:7px;border-radius:50%;background:#8c959f;animation:b 1s infinite}" +
    ".t i:nth-child(2){animation-delay:.15s}.t i:nth-child(3){animation-delay:.3s}@keyframes b{50%{opacity:.3}}" +
    ".err{margin:0 12px 8px;padding:8px 10px;border-radius:8px;background:#fff1f0;color:#82071e;display:flex;gap:8px;align-items:center}" +
    ".err[hidden]{display:none}.err span{flex:1}.err button{border:1px solid #82071e;background:#fff;color:#82071e;border-radius:6px;cursor:pointer}" +
    ".c{display:flex;gap:8px;padding:10px;border-top:1px solid #d0d7de}.c textarea{flex:1;resize:none;border:1px solid #d0d7de;border-radius:8px;padding:8px;height:40px}" +
    ".c button,.lf button{border:0;border-radius:8px;padding:0 14px;background:var(--c);color:#fff;cursor:pointer}button:disabled{opacity:.5;cursor:default}" +
    ".lead{display:flex;flex-direction:column;align-items:flex-start}.offer,.pp{border:1px solid var(--c);background:#fff;color:#1f2328;border-radius:16px;padding:5px 12px;cursor:pointer}" +
    ".lf{align-self:stretch;display:flex;flex-direction:column;gap:3px;padding:10px;background:#fff;border:1px solid #d0d7de;border-radius:10px}.lf p{margin:0 0 4px}" +
    ".lf label{margin-top:4px;font-size:12px;font-weight:600}.lf input,.lf textarea{border:1px solid #d0d7de;border-radius:6px;padding:6px 8px}.lf textarea{resize:vertical;height:60px}" +
    ".lf .ck{display:flex;gap:6px;align-items:flex-start;font-weight:400}.ck input{margin:3px 0 0}[aria-invalid=true]{border-color:#cf222e!important;outline-color:#cf222e}" +
    ".fe{margin:0;color:#82071e;font-size:12px}.fe:empty{display:none}.lf button{align-self:flex-start;margin-top:8px;padding:7px 14px}" +
    ".thx{margin:0;padding:8px 11px;border-radius:10px;background:#dafbe1;color:#116329}" +
    ".agent{align-self:flex-start;background:#fff;border:1px solid var(--c)}.au{display:block;font-size:12px;font-weight:600;color:#57606a}.pp{margin-bottom:6px}" +
    ".rt{display:flex;flex-wrap:wrap;gap:4px;align-items:center;margin-top:6px;white-space:normal}.rt button,.cs button{border:1px solid #d0d7de;background:#fff;color:#57606a;border-radius:6px;cursor:pointer;padding:2px 6px;line-height:0}" +
    ".rt svg{width:15px;height:15px;fill:currentColor}.rt .dn svg{transform:rotate(180deg)}.rt [aria-pressed=true]{background:var(--c);border-color:var(--c);color:#fff}" +
    ".rt form{display:flex;gap:4px;width:100%}.rt input{flex:1;min-width:0;border:1px solid #d0d7de;border-radius:6px;padding:4px 6px;font-size:12px}.rt form button{line-height:1.45;font-size:12px}.rt p{margin:0;font-size:12px;color:#57606a}" +
    ".cs{align-self:stretch;padding:10px;background:#fff;border:1px solid #d0d7de;border-radius:10px}.cs p{margin:0 0 6px}.cs div{display:flex;gap:6px}.cs button{line-height:1.45;padding:4px 10px}.cs div button{flex:1}.cs small{display:flex;justify-content:space-between;color:#57606a;font-size:11px;margin:4px 0}";

  var store = "parley:" + (preview ? "preview:" : "") + merchant;
  var state = load();
  var t = TEXTS.en, settings = {}, busy = false, blocked = false, pending = null;

  function load() {
    try { return JSON.parse(localStorage.getItem(store)) || { messages: [] }; } catch (e) { return { messages: [] }; }
  }
  function save() {
    try { localStorage.setItem(store, JSON.stringify(state)); } catch (e) { /* private mode: the conversation lives for this page only */ }
  }
  // With the conversation ID, the visitor ID is what lets a page continue a conversation or leave a lead for it,
  // so it comes from the browser's cryptographic generator, never from Math.random; without storage (private
  // mode), it lasts as long as the page.
  var pageVisitor = "";
  function newVisitor() {
    var b = crypto.getRandomValues(new Uint8Array(16));
    return "v_" + Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }
  function visitor() {
    try {
      var v = localStorage.getItem("parley:visitor");
      if (!v) { v = newVisitor(); localStorage.setItem("parley:visitor", v); }
      return v;
    } catch (e) { return pageVisitor || (pageVisitor = newVisitor()); }
  }
  function el(tag, attrs, text) {
    var n = document.createElement(tag);
    for (var a in attrs) n.setAttribute(a, attrs[a]);
    if (text) n.textContent = text;
    return n;
  }
  function request(method, path, body, onDelta) {
    var headers = preview ? { "X-CSRF-Token": csrf } : { "X-API-Key": key };
    if (onDelta) headers.Accept = "text/event-stream";
    var v = preview ? "" : visitor();
    if (v) headers["X-Visitor-ID"] = v;
    if (body) headers["Content-Type"] = "application/json";
    var url = preview ? preview + path.replace("/api/v1", "") : api + path;
    return fetch(url, { method: method, headers: headers, body: body ? JSON.stringify(body) : undefined, credentials: preview ? "same-origin" : "omit" })
      .then(function (res) {
        if (!onDelta || !res.ok || !res.body || !/^text\/event-stream/.test(res.headers.get("Content-Type"))) return answerOf(res);
        // The answer as server-sent events: delta pieces, then the stored reply (sources), then end.
        var reader = res.body.getReader(), dec = new TextDecoder(), buf = "";
        function pump() {
          return reader.read().then(function (r) {
            buf += dec.decode(r.value, { stream: !r.done });
            var parts = buf.split("\n\n"), reply;
            buf = parts.pop();
            parts.forEach(function (p) {
              var ev = /^event: (.*)$/m.exec(p), data = JSON.parse((/^data: (.*)$/m.exec(p) || [0, "{}"])[1]);
              ev = ev && ev[1];
              if (ev === "delta") onDelta(data.text);
              if (ev === "sources") reply = data;
              if (ev === "error") throw { code: (data.error && data.error.code) || "failed" };
            });
            if (reply) { reader.cancel(); return reply; }
            if (r.done) throw { code: "failed" };
            return pump();
          });
        }
        return pump();
      }, function () { throw { code: "offline" }; })
      .catch(function (e) { throw e && e.code ? e : { code: "offline" }; });
  }
  function answerOf(res) {
    return res.json().catch(function () { return {}; }).then(function (data) {
      if (!res.ok) throw { code: (data.error && data.error.code) || "failed", retryAfter: res.headers.get("Retry-After") };
      return data;
    });
  }

  var host = el("div", { "data-parley": "" });
  var root = host.attachShadow({ mode: "open" });
  try {
    var sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } catch (e) {
    root.appendChild(el("style", {}, CSS));
  }
  var wrap = el("div", { "class": "w" });
  var launcher = el("button", { "class": "l", type: "button", "aria-expanded": "false", "aria-controls": "parley-panel" });
  launcher.innerHTML = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z"/></svg>';
  var panel = el("div", { "class": "p", id: "parley-panel", role: "dialog", hidden: "" });
  var header = el("header");
  var title = el("h2", { id: "parley-title" });
  var fresh = el("button", { type: "button", "class": "fresh" });
  var close = el("button", { type: "button", "class": "x" }, "\u00d7");
  var log = el("div", { "class": "log", role: "log", "aria-live": "polite", "aria-relevant": "additions" });
  var typing = el("div", { "class": "t", hidden: "" });
  typing.innerHTML = "<i></i><i></i><i></i>";
  var typingLabel = el("span", { "class": "sr" });
  typing.appendChild(typingLabel);
  var error = el("div", { "class": "err", role: "alert", hidden: "" });
  var errorText = el("span");
  var retry = el("button", { type: "button", "class": "retry" });
  var form = el("form", { "class": "c" });
  var input = el("textarea", { rows: "1", maxlength: "4000" });
  var send = el("button", { type: "submit" });

  // The contact form, offered under an answer the assistant could not give: a button that opens the form, the
  // form, and the thanks that replace it. The log announces the offer and the thanks; the form itself is not
  // announced (the focus moves into it), but its errors are.
  var lead = el("div", { "class": "lead" });
  var offer = el("button", { type: "button", "class": "offer" });
  var leadForm = el("form", { "class": "lf", novalidate: "", "aria-live": "off", hidden: "" });
  var leadIntro = el("p");
  var fields = {}, labels = {};
  ["name", "email", "phone", "message"].forEach(function (f) {
    var attrs = { id: "parley-" + f, name: f, maxlength: f === "message" ? "2000" : "200" };
    if (f !== "message") {
      attrs.type = f === "name" ? "text" : f === "phone" ? "tel" : f;
      attrs.autocomplete = f === "phone" ? "tel" : f;
    }
    if (f === "email" || f === "phone") attrs["aria-describedby"] = "parley-ce";
    labels[f] = el("label", { "for": attrs.id });
    fields[f] = el(f === "message" ? "textarea" : "input", attrs);
  });
  var contactErr = el("p", { id: "parley-ce", "class": "fe", role: "alert" });
  var consent = el("input", { type: "checkbox", id: "parley-consent", name: "consent", "aria-describedby": "parley-ke" });
  var consentLabel = el("label", { "class": "ck" });
  var consentText = el("span");
  var consentErr = el("p", { id: "parley-ke", "class": "fe", role: "alert" });
  var leadErr = el("p", { "class": "fe", role: "alert" });
  var leadSend = el("button", { type: "submit" });
  var thanks = el("p", { "class": "thx", tabindex: "-1", hidden: "" });
  var offerFor = null, leadBusy = false;
  consentLabel.append(consent, consentText);
  leadForm.append(leadIntro, labels.name, fields.name, labels.email, fields.email, labels.phone, fields.phone, contactErr,
    labels.message, fields.message, consentLabel, consentErr, leadErr, leadSend);
  var person = el("button", { type: "button", "class": "pp" });
  lead.append(person, offer, leadForm, thanks);

  panel.setAttribute("aria-labelledby", "parley-title");
  header.append(title, fresh, close);
  error.append(errorText, retry);
  form.append(input, send);
  panel.append(header, log, error, form);
  wrap.append(panel, launcher);
  root.appendChild(wrap);

  // applyTexts writes the widget's own words in the visitor's language: the first of the browser's languages the
  // widget speaks, unless the merchant fixed one (locale_fixed), then the merchant's locale, then English. The
  // language's texts are fetched the first time; keys they lack are English's.
  function applyTexts() {
    var tags = (settings.locale_fixed ? [] : navigator.languages || [navigator.language]).concat(settings.locale || "en"), lang;
    for (var i = 0; i < tags.length; i++) {
      lang = String(tags[i]).toLowerCase().split("-")[0];
      if (lang === "en" || LANGS.indexOf(lang) >= 0) break;
    }
    if (LANGS.indexOf(lang) >= 0 && !TEXTS[lang]) {
      TEXTS[lang] = TEXTS.en;
      fetch(api + "/widget/" + lang + ".json").then(function (res) { return res.json(); }).then(function (x) {
        TEXTS[lang] = Object.assign({}, TEXTS.en, x);
        applyTexts();
        if (!busy) render(); // a streamed answer is not redrawn away
      }, function () { /* English it stays */ });
    }
    t = TEXTS[lang] || TEXTS.en;
    wrap.setAttribute("dir", RTL.indexOf(lang) >= 0 ? "rtl" : "ltr");
    wrap.setAttribute("lang", lang);
    wrap.className = "w" + (settings.position === "bottom-left" ? " left" : "");
    host.style.setProperty("--c", /^#[0-9a-fA-F]{3,8}$/.test(settings.color || "") ? settings.color : "#1f6feb");
    title.textContent = settings.title || t.title;
    launcher.setAttribute("aria-label", t.open);
    close.setAttribute("aria-label", t.close);
    fresh.textContent = t.fresh;
    input.setAttribute("placeholder", t.placeholder);
    input.setAttribute("aria-label", t.placeholder);
    send.textContent = t.send;
    retry.textContent = t.retry;
    typingLabel.textContent = t.typing;
    offer.textContent = t.lead;
    person.textContent = t.person;
    leadIntro.textContent = t.lead_intro;
    for (var f in labels) labels[f].textContent = t[f];
    consentText.textContent = t.consent;
    leadSend.textContent = t.lead_send;
    thanks.textContent = t.thanks;
  }

  function render() {
    log.textContent = "";
    addMessage({ role: "bot", text: settings.greeting || t.greeting });
    // The contact form goes under the last answer the assistant could not give, or stays where it was sent.
    var at = null, sent = false;
    state.messages.forEach(function (m) {
      var node = addMessage(m);
      if (!sent && (m.lead || m.unanswered)) { at = node; offerFor = m; sent = !!m.lead; }
    });
    log.appendChild(typing);
    person.hidden = withTeam() || !!preview;
    if (sent) stage(2);
    if (at) log.insertBefore(lead, at.nextSibling);
  }

  // stage shows the offer (0), the form (1) or the thanks (2).
  function stage(n) {
    offer.hidden = n !== 0;
    leadForm.hidden = n !== 1;
    thanks.hidden = n !== 2;
  }

  function resetLead() {
    leadForm.reset();
    [contactErr, consentErr, leadErr].forEach(function (p) { p.textContent = ""; });
    [fields.email, fields.phone, consent].forEach(function (f) { f.removeAttribute("aria-invalid"); });
    offerFor = null;
    stage(0);
  }

  function openLead() {
    stage(1);
    // The question the assistant could not answer is the likely message.
    var asked = state.messages.filter(function (m) { return m.role === "you"; }).pop();
    if (!fields.message.value && asked) fields.message.value = asked.text;
    fields.name.focus();
  }

  function badPhone(p) {
    var digits = (p.match(/\d/g) || []).length;
    return !/^\+?[\d .\/()-]+$/.test(p) || digits < 7 || digits > 15;
  }

  function sendLead(e) {
    e.preventDefault();
    if (leadBusy) return;
    var v = {};
    for (var f in fields) v[f] = fields[f].value.trim();
    var ce = !v.email && !v.phone ? t.need_contact :
      v.email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.email) ? t.bad_email :
      v.phone && badPhone(v.phone) ? t.bad_phone : "";
    var ke = consent.checked ? "" : t.need_consent;
    contactErr.textContent = ce;
    consentErr.textContent = ke;
    leadErr.textContent = "";
    invalid(fields.email, ce && ce !== t.bad_phone);
    invalid(fields.phone, ce && ce !== t.bad_email);
    invalid(consent, ke);
    var first = leadForm.querySelector("[aria-invalid=true]");
    if (first) { first.focus(); return; }
    var body = { consent: true, conversation_id: state.conversation_id };
    for (f in v) if (v[f]) body[f] = v[f];
    leadBusy = leadSend.disabled = true;
    request("POST", "/api/v1/leads", body).then(function () {
      if (offerFor) offerFor.lead = true;
      save();
      stage(2);
      thanks.focus();
    }, function (err) {
      leadErr.textContent = t[err.code] || t.failed;
    }).then(function () {
      leadBusy = leadSend.disabled = false;
    });
  }

  function invalid(field, bad) {
    if (bad) field.setAttribute("aria-invalid", "true"); else field.removeAttribute("aria-invalid");
  }

  // fill writes a message into node: a visitor's text as it is, the assistant's as a safe subset of markdown, then
  // the sources. The streamed answer is filled again from the text so far at each piece, so that it reads the same
  // as the finished one; its markers link their sources once they have come.
  function fill(node, m) {
    node.textContent = "";
    // A team member's message names its author; the visitor's and the assistant's are named for screen readers.
    if (m.role === "agent") node.appendChild(el("b", { "class": "au" }, author(m)));
    else node.appendChild(el("span", { "class": "sr" }, (m.role === "you" ? t.you : t.bot) + ": "));
    // The text takes its own direction: a merchant's English greeting in a Hebrew widget, say. Only the model's
    // answers are markdown; what a person wrote is shown as written.
    if (m.role !== "bot") node.appendChild(el("span", { dir: "auto" }, m.text));
    else md(node.appendChild(el("div", { "class": "tx", dir: "auto" })), m.text, m.sources);
    if (m.cut) node.appendChild(el("p", { "class": "sg" }, t.cut));
    var links = (m.sources || []).filter(href);
    if (links.length) {
      // A reply without an answer links the pages nearest to the question instead, and says so.
      if (m.suggested) node.appendChild(el("p", { "class": "sg" }, t.suggested));
      var list = el(m.suggested ? "ul" : "ol", { "class": "src", "aria-label": m.suggested ? t.suggested : t.sources });
      links.forEach(function (s) {
        list.appendChild(el("li")).appendChild(link(s.url, s.title || s.url));
      });
      node.appendChild(list);
    }
    if (m.role === "bot" && m.id && !preview) node.appendChild(rateBar(m));
  }
  function href(s) { return /^https?:\/\//i.test(s.url || ""); }
  function link(url, text) { return el("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text); }

  // md renders text into node as paragraphs and lists of inline text. Nothing of the text is ever HTML: every
  // piece is a text node or an element made here, and links go to http(s) addresses only.
  function md(node, text, sources) {
    var block = null, list = null;
    text.split("\n").forEach(function (line) {
      var item = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line);
      if (!line.trim()) block = list = null;
      else if (item) {
        var tag = item[1] ? "ol" : "ul";
        if (!list || list.tagName !== tag.toUpperCase()) list = node.appendChild(el(tag));
        inline(block = list.appendChild(el("li")), item[2], sources);
      } else {
        if (block && list) block.appendChild(document.createTextNode(" "));
        else if (block) block.appendChild(el("br"));
        else block = node.appendChild(el("p"));
        inline(block, line.trim(), sources);
      }
    });
  }
  // INLINE matches, in turn: **bold**, *italics*, [text](link), a citation [n], a bare address.
  var INLINE = /\*\*(.+?)\*\*|\*(\S(?:.*?\S)?)\*|\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)|\[(\d+)\]|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])/g;
  function inline(node, text, sources) {
    var at = 0, m, s;
    INLINE.lastIndex = 0;
    while ((m = INLINE.exec(text))) {
      node.appendChild(document.createTextNode(text.slice(at, m.index)));
      at = INLINE.lastIndex;
      if (m[1]) inline(node.appendChild(el("strong")), m[1], sources);
      else if (m[2]) inline(node.appendChild(el("em")), m[2], sources);
      else if (m[3]) node.appendChild(/^https?:\/\//i.test(m[4]) ? link(m[4], m[3]) : document.createTextNode(m[3]));
      else if (m[5]) {
        s = (sources || [])[m[5] - 1];
        node.appendChild(el("sup", { "class": "ci" })).appendChild(s && href(s) ?
          el("a", { href: s.url, target: "_blank", rel: "noopener noreferrer", title: s.title || s.url }, m[5]) : document.createTextNode(m[5]));
      } else node.appendChild(link(m[6], m[6]));
      INLINE.lastIndex = at; // the bold and italics within used it too
    }
    node.appendChild(document.createTextNode(text.slice(at)));
  }

  function addMessage(m) {
    var node = el("div", { "class": "m " + m.role });
    fill(node, m);
    log.insertBefore(node, typing.parentNode === log ? typing : null);
    log.scrollTop = log.scrollHeight;
    return node;
  }

  // rateBar is the thumbs up and down under an answer: toggle buttons (aria-pressed) that send the rating at once,
  // the last one counting; thumbs down then offers a short reason, sent as the same rating with a comment.
  var THUMB = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3a1.5 1.5 0 0 0-.4-1.1L13.2 1 6.6 7.6A2 2 0 0 0 6 9v10a2 2 0 0 0 2 2h9a2 2 0 0 0 1.8-1.2l3-7.1.2-.7v-2z"/></svg>';
  function rateBar(m) {
    var bar = el("div", { "class": "rt" }), note = el("p", { role: "status" });
    var up = el("button", { type: "button", "class": "up", "aria-label": t.helpful, title: t.helpful });
    var down = el("button", { type: "button", "class": "dn", "aria-label": t.not_helpful, title: t.not_helpful });
    up.innerHTML = down.innerHTML = THUMB;
    var why = el("form", { hidden: "" }), reason = el("input", { maxlength: "500", "aria-label": t.reason, placeholder: t.reason });
    why.append(reason, el("button", { type: "submit" }, t.send));
    function show() {
      up.setAttribute("aria-pressed", String(m.rating === "up"));
      down.setAttribute("aria-pressed", String(m.rating === "down"));
    }
    function rate(rating, comment) {
      var body = { message_id: m.id, rating: rating };
      if (comment) body.comment = comment;
      return request("POST", "/api/v1/chat/feedback", body).then(function () {
        m.rating = rating;
        save();
        show();
      }, function (err) { note.textContent = t[err.code] || t.failed; throw err; });
    }
    up.addEventListener("click", function () {
      why.hidden = true;
      rate("up").then(function () { note.textContent = t.rated; }, function () {});
    });
    down.addEventListener("click", function () {
      rate("down").then(function () { note.textContent = ""; why.hidden = false; reason.focus(); }, function () {});
    });
    why.addEventListener("submit", function (e) {
      e.preventDefault();
      rate("down", reason.value.trim()).then(function () { why.hidden = true; note.textContent = t.rated; down.focus(); }, function () {});
    });
    show();
    bar.append(up, down, why, note);
    return bar;
  }

  // askSatisfaction asks the 1 to 5 rating of the conversation that just ended, once: under the new greeting when the
  // visitor started a new one, at the end of the log when the team closed it (atEnd). Answering or skipping removes
  // the card; the focus stays in the message field.
  function askSatisfaction(id, atEnd) {
    var card = el("div", { "class": "cs", role: "group", "aria-labelledby": "parley-cs" }), row = el("div");
    card.append(el("p", { id: "parley-cs" }, t.csat), row);
    [1, 2, 3, 4, 5].forEach(function (n) {
      var b = el("button", { type: "button", "aria-label": n + " / 5" + (n === 1 ? ", " + t.csat_low : n === 5 ? ", " + t.csat_high : "") }, String(n));
      b.addEventListener("click", function () {
        request("POST", "/api/v1/chat/satisfaction", { conversation_id: id, score: n }).then(function () {
          card.textContent = "";
          card.appendChild(el("p", { "class": "thx", role: "status" }, t.rated));
        }, function (err) { showError(err); });
      });
      row.appendChild(b);
    });
    var ends = el("small"), skip = el("button", { type: "button" }, t.skip);
    ends.append(el("span", {}, t.csat_low), el("span", {}, t.csat_high));
    skip.addEventListener("click", function () { card.remove(); input.focus(); });
    card.append(ends, skip);
    if (atEnd) {
      log.appendChild(card);
      log.scrollTop = log.scrollHeight;
    } else log.insertBefore(card, log.firstChild.nextSibling);
  }

  function showError(err) {
    // A refused origin or a suspended merchant cannot chat at all until the merchant changes something.
    blocked = err.code === "origin_not_allowed" || err.code === "merchant_suspended";
    input.disabled = send.disabled = blocked;
    pending = blocked ? null : err.retry || null;
    errorText.textContent = t[err.code] || t.failed;
    retry.hidden = !pending;
    error.hidden = false;
  }

  function ask(text) {
    if (busy) return;
    busy = true;
    send.disabled = true;
    error.hidden = true;
    typing.hidden = false;
    log.scrollTop = log.scrollHeight;
    var body = { message: text, language: wrap.getAttribute("lang") };
    if (state.conversation_id) body.conversation_id = state.conversation_id;
    var live, liveText = "", again = false;
    request("POST", "/api/v1/chat", body, function (piece) {
      if (!live) { typing.hidden = true; live = addMessage({ role: "bot", text: "" }); }
      fill(live, { role: "bot", text: liveText += piece });
      log.scrollTop = log.scrollHeight;
    }).then(function (res) {
      // The stored reply is the whole answer, with its sources: the streamed message becomes it.
      state.conversation_id = res.conversation_id;
      if (handedOver(res)) return;
      var m = { role: "bot", id: res.message_id, text: res.answer, sources: (res.sources || []).map(function (s) { return { title: s.title, url: s.url }; }) };
      if (res.finish_reason) m.cut = true;
      if (res.answered === false && !m.cut && m.sources.length) m.suggested = true;
      var sent = state.messages.some(function (x) { return x.lead; });
      if ((res.answered === false || res.agents_available === false) && !m.cut && !sent && !preview) m.unanswered = true;
      state.messages.push(m);
      save();
      var node = live || addMessage(m);
      fill(node, m);
      log.scrollTop = log.scrollHeight;
      if (m.unanswered) {
        offerFor = m;
        log.insertBefore(lead, node.nextSibling);
        log.scrollTop = log.scrollHeight;
      }
    }, function (err) {
      if (live) log.removeChild(live);
      if ((err.code === "conversation_full" || err.code === "conversation_limit_reached" || err.code === "not_found" ||
          err.code === "conversation_closed") &&
          body.conversation_id) {
        // The conversation holds no more messages, has had what the plan allows one, or is not this visitor's (the
        // browser's storage was partly cleared): the question goes on in a new one, the log stays as it is.
        delete state.conversation_id;
        delete state.status;
        delete state.last_event;
        save();
        again = true;
        return;
      }
      err.retry = function () { ask(text); };
      showError(err);
    }).then(function () {
      busy = false;
      send.disabled = blocked;
      typing.hidden = true;
      if (again) ask(text);
    });
  }

  // A person of the merchant's team. The conversation's status says who answers: while the team has it ("waiting"
  // or "agent") the assistant is silent, and the team's messages come on the conversation's live stream, resumed
  // from the last event seen after a reload or a dropped network, or polled where a proxy holds streams back.
  function withTeam() { return state.status === "waiting" || state.status === "agent"; }
  function author(m) {
    var shop = settings.display_name || "";
    return m.author ? t.agent.replace("{a}", m.author).replace("{s}", shop) : t.team.replace("{s}", shop);
  }
  // handedOver records the conversation's status from a chat answer and reports whether the answer was silent.
  function handedOver(res) {
    state.status = res.status;
    person.hidden = withTeam();
    if (withTeam()) startLive();
    if (res.answer) return false;
    save();
    return true;
  }
  function askPerson() {
    if (busy || !state.conversation_id) return;
    busy = person.disabled = true;
    request("POST", "/api/v1/chat", { conversation_id: state.conversation_id, handoff: true, language: wrap.getAttribute("lang") }).then(function (res) {
      if (handedOver(res)) return;
      // Nobody of the team there: the notice offers the contact form.
      state.messages.push({ role: "bot", text: res.answer, unanswered: res.agents_available === false });
      save();
      render();
    }, showError).then(function () { busy = person.disabled = false; });
  }
  // liveRun is odd while a stream runs; a stream whose run is no longer liveRun stops.
  var liveRun = 0, pollMode = false;
  function stopLive() { if (liveRun % 2) liveRun++; }
  function startLive() {
    if (preview || !state.conversation_id || liveRun % 2) return;
    var run = ++liveRun, id = state.conversation_id, got = false;
    var ctl = new AbortController();
    var headers = { "X-API-Key": key, "X-Visitor-ID": visitor() };
    if (state.last_event) headers["Last-Event-ID"] = state.last_event;
    // A proxy that buffers streams lets nothing through: after 8 seconds without the stream's first line, poll.
    var guard = setTimeout(function () { if (!got) { pollMode = true; ctl.abort(); } }, 8000);
    fetch(api + "/api/v1/conversations/" + encodeURIComponent(id) + "/events" + (pollMode ? "?once=1" : ""),
      { headers: headers, signal: ctl.signal, credentials: "omit" }).then(function (res) {
      if (!res.ok) { if (res.status === 404) delete state.status; throw 0; }
      var reader = res.body.getReader(), dec = new TextDecoder(), buf = "";
      function pump() {
        return reader.read().then(function (r) {
          if (run !== liveRun) { reader.cancel(); return; }
          got = true;
          buf += dec.decode(r.value, { stream: !r.done });
          var parts = buf.split("\n\n");
          buf = parts.pop();
          parts.forEach(liveEvent);
          if (!r.done) return pump();
        });
      }
      return pump();
    }).catch(function () {}).then(function () {
      clearTimeout(guard);
      if (run !== liveRun) return;
      liveRun++;
      if (withTeam() && id === state.conversation_id) setTimeout(startLive, pollMode ? 4000 : 3000);
    });
  }
  function liveEvent(p) {
    var id = /^id: (.*)$/m.exec(p), data = /^data: (.*)$/m.exec(p), ev = /^event: (.*)$/m.exec(p);
    if (!id || !data || !ev) return;
    state.last_event = id[1];
    data = JSON.parse(data[1]);
    if (ev[1] === "status") {
      state.status = data.status;
      person.hidden = withTeam();
      if (!withTeam()) stopLive();
      // The team closed the conversation: it ended, as when the visitor starts a new one.
      if (data.status === "closed" && !state.surveyed && !preview) {
        state.surveyed = true;
        askSatisfaction(state.conversation_id, true);
      }
    }
    if (ev[1] === "message" && data.message.role === "agent") {
      var m = { role: "agent", text: data.message.text, author: data.message.author || "" };
      state.messages.push(m);
      addMessage(m);
    }
    save();
  }

  function submit(e) {
    e.preventDefault();
    var text = input.value.trim();
    if (!text || busy || blocked) return;
    input.value = "";
    var m = { role: "you", text: text };
    state.messages.push(m);
    save();
    addMessage(m);
    ask(text);
  }

  function open() {
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    launcher.setAttribute("aria-label", t.close);
    log.scrollTop = log.scrollHeight;
    input.focus();
  }
  function shut() {
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    launcher.setAttribute("aria-label", t.open);
    launcher.focus();
  }

  launcher.addEventListener("click", function () { if (panel.hidden) open(); else shut(); });
  close.addEventListener("click", shut);
  fresh.addEventListener("click", function () {
    stopLive();
    var ended = !preview && !state.surveyed && state.messages.some(function (m) { return m.id; }) && state.conversation_id;
    state = { messages: [] };
    save();
    resetLead();
    error.hidden = true;
    render();
    if (ended) askSatisfaction(ended);
    input.focus();
  });
  retry.addEventListener("click", function () { if (pending) pending(); });
  form.addEventListener("submit", submit);
  offer.addEventListener("click", openLead);
  person.addEventListener("click", askPerson);
  leadForm.addEventListener("submit", sendLead);
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey) submit(e);
  });
  root.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && !panel.hidden) { e.stopPropagation(); shut(); }
  });

  function start() {
    applyTexts();
    render();
    document.body.appendChild(host);
    request("GET", "/api/v1/widget").then(function (s) {
      settings = s;
      applyTexts();
      render();
      if (withTeam()) startLive();
    }, function (err) {
      if (err.code !== "offline") showError(err);
    });
  }
  if (document.body) start(); else document.addEventListener("DOMContentLoaded", start);
})();
