// agmem ui: a session still being recorded gains its new calls without a reload. The
// page asks every two seconds how many entries the journal holds of it and how many
// are pending; when that changes it fetches itself again and puts the new summary,
// timeline, list and pager in place of the old ones. All of them come from the server
// escaped; nothing here builds markup from data. A session unchanged for half an hour
// is no longer followed.
"use strict";

(function () {
  const live = document.getElementById("live");
  if (!live || live.dataset.entries === "-1") {
    return;
  }
  // As the server links it (pathSegment): a browser resolves a segment "." or "..".
  const session = encodeURIComponent(live.dataset.session).replace(/^\.\.?$/, (dots) => dots.replaceAll(".", "%2E"));
  let seen = live.dataset.entries + "/" + live.dataset.pending;
  let unchanged = 0;
  async function poll() {
    try {
      const answer = await fetch("/session/" + session + "/count", { credentials: "same-origin" });
      const now = await answer.json();
      const key = now.entries + "/" + now.pending;
      if (key !== seen) {
        seen = key;
        unchanged = 0;
        const page = await fetch(location.pathname + location.search, { credentials: "same-origin" });
        const doc = new DOMParser().parseFromString(await page.text(), "text/html");
        for (const id of ["summary", "timeline", "calls", "pager"]) {
          const fresh = doc.getElementById(id);
          const old = document.getElementById(id);
          if (fresh && old) {
            old.replaceWith(document.importNode(fresh, true));
          }
        }
      } else {
        unchanged++;
      }
    } catch (e) {
      // The server stopped, or a request failed: try again at the next tick.
    }
    if (unchanged < 900) {
      setTimeout(poll, 2000);
    }
  }
  setTimeout(poll, 2000);
})();
