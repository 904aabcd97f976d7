// The web table's page: draws the player's state, sends moves, follows the live revision stream.
"use strict";
const base = location.pathname.replace(/\/+$/, "");
let revision = null;

function el(tag, attributes, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "text") node.textContent = value; else node.setAttribute(key, value);
  }
  for (const child of children || []) node.appendChild(child);
  return node;
}

function say(text) { document.getElementById("message").textContent = text; }

async function load() {
  const response = await fetch(base + "/state", {cache: "no-store"});
  if (!response.ok) { say((await response.json()).error); return; }
  render(await response.json());
}

async function send(path, body) {
  body.revision = revision;
  const response = await fetch(base + path, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  });
  const answer = await response.json();
  say(response.ok ? answer.did.join(" ") : answer.error);
  await load();
}

function fieldInput(field, id) {
  if (field.type === "number") {
    const input = el("input", {type: "number", id: id, name: field.name, min: field.min, step: 1});
    if (field.max !== undefined) input.max = field.max;
    input.value = field.default ?? field.min;
    return input;
  }
  const select = el("select", {id: id, name: field.name});
  if (field.type === "multi") select.multiple = true;
  const chosen = Array.isArray(field.default) ? field.default : [field.default];
  for (const choice of field.choices) {
    const option = el("option", {value: choice, text: choice});
    if (chosen.includes(choice)) option.selected = true;
    select.appendChild(option);
  }
  return select;
}

function readFields(form, fields) {
  const params = {};
  for (const field of fields) {
    const input = form.elements[field.name];
    let value = field.type === "multi" ? Array.from(input.selectedOptions, o => o.value)
      : field.type === "number" ? Number(input.value) : input.value;
    const path = field.name.split(".");
    let target = params;
    for (const key of path.slice(0, -1)) target = target[key] = target[key] || {};
    target[path[path.length - 1]] = value;
  }
  return params;
}

function moveForm(spec, prefix, onSubmit, button) {
  const form = el("form", {class: "move", "data-kind": spec.kind});
  form.appendChild(el("strong", {text: spec.label + " "}));
  spec.fields.forEach((field, index) => {
    const id = `${prefix}-${spec.kind}-${index}`;
    form.appendChild(el("label", {for: id, text: field.name + " "}, [fieldInput(field, id)]));
  });
  form.appendChild(el("button", {type: "submit", text: button}));
  form.addEventListener("submit", event => { event.preventDefault(); onSubmit(readFields(form, spec.fields)); });
  return form;
}

// A live update redraws the forms; what the player was typing into them is kept.
function keepTyped(container) {
  const typed = new Map();
  for (const input of container.querySelectorAll("input, select")) {
    typed.set(input.id, input.multiple ? Array.from(input.selectedOptions, o => o.value) : input.value);
  }
  return typed;
}

function restoreTyped(container, typed) {
  for (const input of container.querySelectorAll("input, select")) {
    if (!typed.has(input.id)) continue;
    const value = typed.get(input.id);
    if (input.multiple) {
      for (const option of input.options) option.selected = value.includes(option.value);
    } else if (input.tagName !== "SELECT" || Array.from(input.options).some(o => o.value === value)) {
      input.value = value;
    }
  }
}

// A click on a zone of the map fills the "from" field, then "to" (and adds to a list of targets).
function pickZone(name) {
  const form = document.querySelector("#forms form");
  if (!form) return;
  const targets = form.elements["targets"];
  if (targets) {
    for (const option of targets.options) if (option.value === name) option.selected = !option.selected;
    return;
  }
  const from = form.elements["from"] || form.elements["zone"], to = form.elements["to"];
  const field = from && (!from.dataset.picked || !to) ? from : to;
  if (!field) return;
  field.value = name;
  if (field === from) from.dataset.picked = "1"; else if (from) delete from.dataset.picked;
}

function resultForm(b) {
  return moveForm({kind: "battle", label: "Result", fields: b.fields}, "battle",
    params => send("/battle", {result: params}), "Report result");
}

function pagePlayer() { return document.body.dataset.player; }

function describeResult(result) {
  const energy = result.energy ? "; units left: " + Object.entries(result.energy).map(([p, n]) => `${p} ${n}`).join(", ") : "";
  return `${result.winner} wins${energy}`;
}

// The console bridge's prompt: what the console read, confirmed or corrected by the battle's players.
function bridgePrompt(b) {
  const bridge = b.bridge;
  const box = el("div", {id: "bridge", "data-state": bridge.state});
  box.appendChild(el("p", {text: `Console battle: ${b.attacker} attacks ${b.defender} on the console.`}));
  if (bridge.messages) box.appendChild(el("ul", {class: "bridge-messages"}, bridge.messages.map(m => el("li", {text: m}))));
  if (bridge.seconds_left !== undefined) {
    box.appendChild(el("p", {class: "deadline", text: `Unconfirmed after ${Math.round(bridge.seconds_left)} more seconds, the result is entered by hand.`}));
  }
  if (bridge.state === "confirm" && b.yours) {
    if (bridge.you_confirmed) box.appendChild(el("p", {text: `Confirmed; waiting for ${bridge.waiting_for.join(", ")}.`}));
    else {
      const answer = yes => send("/confirm", {question: bridge.question, yes: yes});
      const right = el("button", {type: "button", id: "confirm-yes", text: "Yes, that is what the screen shows"});
      const wrong = el("button", {type: "button", id: "confirm-no", text: "No, correct it"});
      right.addEventListener("click", () => answer(true));
      wrong.addEventListener("click", () => answer(false));
      box.appendChild(el("p", {}, [right, wrong]));
    }
  } else if (bridge.state === "manual" && b.yours) {
    box.appendChild(el("p", {class: "reason", text: `Enter the result by hand: ${bridge.text}`}));
    const entry = bridge.entry;
    if (entry && entry.entered_by === pagePlayer()) {
      box.appendChild(el("p", {id: "entry", text: `You entered: ${describeResult(entry.result)}. Waiting for ${bridge.waiting_for.join(", ")} to confirm it (or enter another result).`}));
    } else if (entry) {
      const agree = el("button", {type: "button", id: "entry-yes", text: "Yes, that is what the screen shows"});
      agree.addEventListener("click", () => send("/confirm", {question: bridge.question, yes: true}));
      box.appendChild(el("p", {id: "entry", text: `${entry.entered_by} entered: ${describeResult(entry.result)}. `}, [agree]));
      box.appendChild(el("p", {text: "Or enter what the screen shows:"}));
    } else {
      box.appendChild(el("p", {text: "One of you enters it; the other confirms it on their own page."}));
    }
    box.appendChild(resultForm(b));
  } else if (bridge.state !== "fighting") {
    box.appendChild(el("p", {text: `Waiting for ${bridge.waiting_for.join(", ")}.`}));
  }
  return box;
}

function render(state) {
  revision = state.revision;
  document.body.dataset.revision = state.revision;
  document.body.dataset.player = state.player;
  document.getElementById("status").textContent = state.status;
  const map = document.getElementById("map");
  map.innerHTML = state.svg;
  for (const zone of map.querySelectorAll("g.zone")) {
    zone.addEventListener("click", () => pickZone(zone.dataset.zone));
  }
  document.getElementById("board").textContent = state.board;
  const battle = document.getElementById("battle");
  const typedResult = keepTyped(battle);
  battle.replaceChildren();
  if (state.battle) {
    const b = state.battle;
    if (b.bridge) battle.appendChild(bridgePrompt(b));
    else {
      battle.appendChild(el("p", {text: `Console battle: ${b.attacker} attacks ${b.defender}. Fight it on the console, then enter what the screen shows.`}));
      if (b.yours) battle.appendChild(resultForm(b));
    }
  }
  restoreTyped(battle, typedResult);
  const forms = document.getElementById("forms");
  const typed = keepTyped(forms);
  forms.replaceChildren(...state.forms.map(spec =>
    moveForm(spec, "form", params => send("/move", {kind: spec.kind, params: params}), "Do it")));
  restoreTyped(forms, typed);
  const groups = new Map();
  for (const move of state.moves) {
    if (!groups.has(move.kind)) groups.set(move.kind, []);
    groups.get(move.kind).push(move);
  }
  const moves = document.getElementById("moves");
  moves.replaceChildren(...Array.from(groups, ([kind, list]) => {
    const group = el("details", {"data-kind": kind}, [el("summary", {text: `${kind.replace(/_/g, " ")} (${list.length})`})]);
    group.open = list.length <= 12;
    for (const move of list) {
      const button = el("button", {type: "button", class: "move", "data-kind": move.kind, text: move.label});
      button.addEventListener("click", () => send("/move", {kind: move.kind, params: move.params}));
      group.appendChild(button);
    }
    return group;
  }));
  const undo = document.getElementById("undo");
  undo.hidden = !state.can_undo;
  undo.onclick = () => send("/undo", {});
  const log = document.getElementById("log");
  log.replaceChildren(...state.log.map(line => el("li", {text: line})));
  log.scrollTop = log.scrollHeight;
}

const stream = new EventSource(base + "/events");
stream.onmessage = event => { if (event.data !== revision) load(); };
load();
