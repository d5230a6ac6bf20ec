// The ask box streams the diagnosis stages (POST /api/v1/chat/stream, Server-Sent Events).
// Without JavaScript the form posts to /ask and the server redirects to the session page.
(function () {
  const form = document.getElementById("ask-form");
  if (!form || !window.fetch || !window.TextDecoder) return;
  const list = document.getElementById("ask-stages");
  const item = (text) => { const li = document.createElement("li"); li.textContent = text; list.appendChild(li); return li; };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = document.getElementById("ask-query").value.trim();
    if (!query) return;
    const button = document.getElementById("ask-button");
    button.disabled = true;
    list.replaceChildren();
    item(list.dataset.streaming);
    try {
      const response = await fetch("/api/v1/chat/stream", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "text/event-stream", "X-Veridiag-Client": "workbench" },
        body: JSON.stringify({ query: query, lang: list.dataset.lang }),
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        item((body.error && body.error.message) || response.statusText).className = "bad";
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const stage = (frame.match(/^event: (.*)$/m) || [])[1];
          const data = JSON.parse((frame.match(/^data: (.*)$/m) || [])[1] || "{}");
          show(stage, data);
        }
      }
    } finally {
      button.disabled = false;
    }
  });

  function show(stage, data) {
    if (stage === "done") {
      const li = item("");
      const link = document.createElement("a");
      link.href = "/sessions/" + data.session_id + "?lang=" + list.dataset.lang;
      link.id = "ask-result";
      link.textContent = list.dataset.open + " · " + (data.verdict || "FAILED");
      li.appendChild(link);
      return;
    }
    if (stage === "tool") { item("tool #" + data.invocation_id + " " + data.tool + " → " + data.status); return; }
    const shown = Object.entries(data).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && !v.length))
      .map(([k, v]) => k + "=" + (typeof v === "object" ? JSON.stringify(v) : v)).join(", ");
    item(stage + (shown ? ": " + shown : ""));
  }
})();

// Copy buttons on the session page (hidden without JavaScript, where the links still open the
// permalink and the Markdown): data-copy-text copies itself, data-copy-url the text it fetches.
(function () {
  const buttons = document.querySelectorAll("button.copy");
  if (!buttons.length || !navigator.clipboard || !window.fetch) return;
  buttons.forEach((button) => {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const status = button.closest("section").querySelector(".copy-status");
      try {
        const text = button.dataset.copyText !== undefined ? button.dataset.copyText
          : await fetch(button.dataset.copyUrl, { credentials: "same-origin" }).then((r) => {
            if (!r.ok) throw new Error(r.statusText);
            return r.text();
          });
        await navigator.clipboard.writeText(text);
        status.textContent = button.dataset.copied;
      } catch (error) {
        status.textContent = button.dataset.failed;
      }
    });
  });
})();

// A link to evidence folded in the audit trail (#invocation-7) opens the folds around it, where
// the browser does not do so itself; without JavaScript the audit trail is one click away.
(function () {
  function reveal() {
    const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!target) return;
    for (let node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  if (location.hash) reveal();
})();
