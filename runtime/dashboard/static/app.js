// The dashboard's only script: confirmations before destructive forms, the copy button, and forgetting the live
// preview's conversations once signed out. Every page works without it.
"use strict";
if (document.querySelector("[data-signed-out]")) {
  // The preview keeps its conversation per merchant, as the widget does; nobody else at this browser reads it.
  for (const k of Object.keys(localStorage)) if (k.startsWith("parley:preview:")) localStorage.removeItem(k);
}
document.addEventListener("submit", (e) => {
  const msg = e.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) e.preventDefault();
});
document.addEventListener("click", (e) => {
  const btn = e.target.closest("[data-copy]");
  if (!btn) return;
  const text = document.getElementById(btn.getAttribute("data-copy")).textContent;
  navigator.clipboard.writeText(text).then(() => {
    const done = document.querySelector("[data-copied]");
    if (done) done.hidden = false;
  });
});
// The inbox and a conversation handed to the team refresh themselves every 3 seconds: the parts marked
// data-refresh are replaced by the same parts of the page read again. A new waiting conversation in the inbox is
// announced on the page and in its title. A reply's author name is remembered in this browser.
const live = document.querySelectorAll("[data-refresh][id]");
if (live.length) {
  const title = document.title;
  setInterval(() => {
    fetch(location.href, { credentials: "same-origin" }).then((res) => res.ok ? res.text() : null).then((html) => {
      if (!html) return;
      const fresh = new DOMParser().parseFromString(html, "text/html");
      for (const el of document.querySelectorAll("[data-refresh][id]")) {
        const next = fresh.getElementById(el.id);
        if (!next || next.innerHTML === el.innerHTML) continue;
        const more = Number(next.dataset.count || 0) > Number(el.dataset.count || 0);
        el.replaceWith(next);
        if (more) {
          next.querySelector("#new-waiting").hidden = false;
          document.title = "(" + next.dataset.count + ") " + title;
        }
      }
    }, () => {});
  }, 3000);
}
for (const input of document.querySelectorAll("[data-remember]")) {
  input.value = localStorage.getItem(input.dataset.remember) || "";
  input.addEventListener("change", () => localStorage.setItem(input.dataset.remember, input.value));
}
