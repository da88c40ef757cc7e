// The dashboard's only script: confirmations before destructive forms, and the copy button. Every page works
// without it.
"use strict";
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
