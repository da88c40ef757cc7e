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
