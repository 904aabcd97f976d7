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

function render(state) {
  revision = state.revision;
  document.body.dataset.revision = state.revision;
  document.getElementById("status").textContent = state.status;
  document.getElementById("map").innerHTML = state.svg;
  document.getElementById("board").textContent = state.board;
  const battle = document.getElementById("battle");
  battle.replaceChildren();
  if (state.battle) {
    const b = state.battle;
    battle.appendChild(el("p", {text: `Console battle: ${b.attacker} attacks ${b.defender}. Fight it on the console, then enter what the screen shows.`}));
    if (b.yours) {
      battle.appendChild(moveForm({kind: "battle", label: "Result", fields: b.fields}, "battle",
        params => send("/battle", {result: params}), "Report result"));
    }
  }
  const forms = document.getElementById("forms");
  forms.replaceChildren(...state.forms.map(spec =>
    moveForm(spec, "form", params => send("/move", {kind: spec.kind, params: params}), "Do it")));
  const moves = document.getElementById("moves");
  moves.replaceChildren(...state.moves.map(move => {
    const button = el("button", {type: "button", class: "move", "data-kind": move.kind, text: move.label});
    button.addEventListener("click", () => send("/move", {kind: move.kind, params: move.params}));
    return button;
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
