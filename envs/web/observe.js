// The page as an agent reads it: a pruned accessibility tree of one frame's document.
//
// Run by observe.py in every frame (iframes are walked separately and spliced in, so a frame
// that detaches mid-walk costs only its own subtree). Every element that gets a line also gets
// a stable id, kept on the element as `data-agid` so it survives later observations; the
// counter lives on the frame's window. Returns a flat list of nodes in document order:
// {id, role, name, value, depth, flags, href, box, frame}.
(args) => {
  const ID = "data-agid";
  const MAX_NAME = 150;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE"]);
  // Roles whose accessible name is their text: what they contain is said once, in their name.
  const NAME_FROM_CONTENT = new Set([
    "link", "button", "heading", "option", "tab", "menuitem", "cell", "columnheader",
    "rowheader", "checkbox", "radio", "summary", "clickable", "treeitem", "switch",
  ]);
  // Roles that say nothing by themselves unless the author named them.
  const CONTAINER = new Set(["list", "table", "row", "rowgroup", "group", "form", "region"]);
  const INPUT_ROLES = {
    button: "button", submit: "button", reset: "button", image: "button",
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
    search: "searchbox", file: "button", color: "button",
  };
  const TAG_ROLES = {
    BUTTON: "button", TEXTAREA: "textbox", OPTION: "option", IMG: "img", UL: "list",
    OL: "list", LI: "listitem", TABLE: "table", TR: "row", TD: "cell", TH: "columnheader",
    NAV: "navigation", MAIN: "main", HEADER: "banner", FOOTER: "contentinfo",
    ASIDE: "complementary", FORM: "form", DIALOG: "dialog", SUMMARY: "summary",
    H1: "heading", H2: "heading", H3: "heading", H4: "heading", H5: "heading", H6: "heading",
    IFRAME: "iframe", FRAME: "iframe", PROGRESS: "progressbar", METER: "meter",
    FIELDSET: "group", THEAD: "rowgroup", TBODY: "rowgroup", CANVAS: "canvas",
  };
  const win = window;
  if (win.__agentgymNextId === undefined) win.__agentgymNextId = 1;
  const out = [];
  const doc = document;

  const clean = (text) => {
    const t = (text || "").replace(/\s+/g, " ").trim();
    return t.length > MAX_NAME ? t.slice(0, MAX_NAME - 1) + "…" : t;
  };
  const ownText = (el) => {
    let t = "";
    for (const child of el.childNodes) if (child.nodeType === 3) t += " " + child.nodeValue;
    return clean(t);
  };
  const roleOf = (el) => {
    const explicit = (el.getAttribute("role") || "").split(" ")[0];
    if (explicit && explicit !== "presentation" && explicit !== "none") return explicit;
    const tag = el.tagName;
    if (tag === "A") return el.hasAttribute("href") ? "link" : "generic";
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (type === "hidden") return null;
      return INPUT_ROLES[type] || "textbox";
    }
    if (tag === "SELECT") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable))
      return "textbox";
    return TAG_ROLES[tag] || "generic";
  };
  const labelled = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = by.split(/\s+/).map((id) => doc.getElementById(id))
        .filter(Boolean).map((n) => n.textContent).join(" ");
      if (clean(text)) return clean(text);
    }
    if (el.getAttribute("aria-label")) return clean(el.getAttribute("aria-label"));
    if (el.labels && el.labels.length)
      return clean(Array.from(el.labels).map((l) => l.textContent).join(" "));
    return "";
  };
  const nameOf = (el, role) => {
    const given = labelled(el);
    if (given) return given;
    const tag = el.tagName;
    if (tag === "IMG") return clean(el.getAttribute("alt") || el.getAttribute("title"));
    if (tag === "INPUT" && ["button", "submit", "reset"].includes(el.type))
      return clean(el.value || (el.type === "submit" ? "Submit" : ""));
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT")
      return clean(el.getAttribute("placeholder") || el.getAttribute("title"));
    if (NAME_FROM_CONTENT.has(role)) return clean(el.innerText || el.textContent);
    if (CONTAINER.has(role)) return clean(el.getAttribute("title"));
    return ownText(el) || clean(el.getAttribute("title"));
  };
  const valueOf = (el, role) => {
    const tag = el.tagName;
    if (tag === "SELECT") {
      const chosen = Array.from(el.selectedOptions).map((o) => clean(o.textContent));
      return chosen.join(", ");
    }
    if (tag === "INPUT") {
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file"].includes(el.type))
        return null;
      return el.type === "password" ? "•".repeat(el.value.length) : el.value;
    }
    if (tag === "TEXTAREA") return el.value;
    if (role === "textbox" && el.isContentEditable) return clean(el.innerText);
    return null;
  };
  const clickable = (el) => {
    if (el.hasAttribute("onclick") || el.tabIndex >= 0) return true;
    const parent = el.parentElement;
    return getComputedStyle(el).cursor === "pointer" &&
      !(parent && getComputedStyle(parent).cursor === "pointer");
  };
  const flagsOf = (el, role) => {
    const flags = [];
    const aria = (name) => el.getAttribute("aria-" + name);
    if (el.checked === true || aria("checked") === "true") flags.push("checked");
    if (el.tagName === "OPTION" ? el.selected : aria("selected") === "true") flags.push("selected");
    if (el.disabled === true || aria("disabled") === "true") flags.push("disabled");
    if (aria("expanded") === "true" || (el.tagName === "DETAILS" && el.open)) flags.push("expanded");
    if (el.required === true) flags.push("required");
    if (el.readOnly === true && role === "textbox") flags.push("readonly");
    if (doc.activeElement === el && el !== doc.body) flags.push("focused");
    return flags;
  };
  const idOf = (el) => {
    let id = el.getAttribute(ID);
    if (!id) {
      id = String(win.__agentgymNextId++);
      el.setAttribute(ID, id);
    }
    return id;
  };
  const emit = (el, role, name, depth) => {
    const r = el.getBoundingClientRect();
    out.push({
      id: idOf(el), role, name, depth,
      value: valueOf(el, role),
      flags: flagsOf(el, role),
      href: role === "link" ? el.href : null,
      box: [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)],
      frame: role === "iframe",
    });
  };

  const walk = (el, depth, inNamed) => {
    if (SKIP.has(el.tagName) || el.getAttribute("aria-hidden") === "true") return;
    if (el.tagName !== "OPTION" && el.checkVisibility &&
        !el.checkVisibility({ visibilityProperty: true })) return;
    let role = roleOf(el);
    if (role === null) return;
    if (role === "generic" && clickable(el)) role = "clickable";
    let printed = false;
    if (role === "iframe") {
      emit(el, role, clean(el.getAttribute("title") || el.getAttribute("name")), depth);
      return;
    }
    if (role === "generic") {
      const text = inNamed ? "" : ownText(el);
      if (text) {
        emit(el, "text", text, depth);
        printed = true;
      }
    } else {
      const name = nameOf(el, role);
      if (!(CONTAINER.has(role) && !name)) {
        emit(el, role, name, depth);
        printed = true;
      }
    }
    if (el.tagName === "SELECT") {
      for (const option of el.options) emit(option, "option", clean(option.textContent), depth + 1);
      return;
    }
    const named = inNamed || NAME_FROM_CONTENT.has(role);
    const next = printed ? depth + 1 : depth;
    const children = el.shadowRoot ? [...el.shadowRoot.children, ...el.children] : el.children;
    for (const child of children) walk(child, next, named);
  };

  if (doc.body) walk(doc.body, args.depth || 0, false);
  return {
    nodes: out,
    title: doc.title,
    scroll: [Math.round(win.scrollX), Math.round(win.scrollY)],
    size: [doc.documentElement.scrollWidth, doc.documentElement.scrollHeight],
  };
}
