"""Inline CSS and JavaScript of the HTML reports (no network: everything lives in the one file).

Item text is hostile data: the browser script builds every node with ``textContent`` and never parses item
text as HTML; the data arrives through ``<script type="application/json">`` with ``<``, ``>`` and ``&``
escaped as ``\\u003c``-style sequences, so no string can close the block.
"""
from __future__ import annotations

import html
import json
from typing import Any, Iterable

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:16px;
color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#1a7f37}.fail,.error,.no-answer{color:#b42318}
#items tbody tr{cursor:pointer}#items tbody tr:hover{background:#f0f6ff}
#controls{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin:.5em 0}
#detail pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;padding:8px;border:1px solid #eee;
max-height:320px;overflow:auto}
.plots img{margin:4px;border:1px solid #eee}.muted{color:#777}
"""

BROWSER_JS = r"""
(function(){
  var errors=[];
  window.addEventListener('error',function(e){errors.push(String(e.message));
    document.body.setAttribute('data-errors',errors.join(' | '));});
  var data=JSON.parse(document.getElementById('report-data').textContent);
  var items=data.items||[];
  var $=function(id){return document.getElementById(id);};
  function opt(sel,value,label){var o=document.createElement('option');o.value=value;o.textContent=label;sel.appendChild(o);}
  var sections=[],verdicts=[];
  items.forEach(function(it){if(sections.indexOf(it.section)<0)sections.push(it.section);
    if(verdicts.indexOf(it.verdict)<0)verdicts.push(it.verdict);});
  sections.sort();verdicts.sort();
  opt($('f-section'),'','all sections');sections.forEach(function(s){opt($('f-section'),s,s||'(none)');});
  opt($('f-verdict'),'','all verdicts');verdicts.forEach(function(v){opt($('f-verdict'),v,v);});
  var params=new URLSearchParams((location.hash||'').replace(/^#/,''));
  if(params.get('failed')==='1')$('f-failed').checked=true;
  if(params.has('section'))$('f-section').value=params.get('section');
  if(params.has('verdict'))$('f-verdict').value=params.get('verdict');
  if(params.has('q'))$('f-search').value=params.get('q');
  function cell(tr,text,cls){var td=document.createElement('td');td.textContent=text;if(cls)td.className=cls;tr.appendChild(td);}
  function show(it){
    var d=$('detail');d.textContent='';
    var h=document.createElement('h3');h.textContent='item '+it.id+' / sample '+it.sample+' ('+it.verdict+')';d.appendChild(h);
    [['prompt','prompt'],['response','response'],['reasoning','reasoning'],['tool calls','tool_calls'],
     ['extracted answer','extracted'],['checker / judge reason','reason']].forEach(function(p){
      var v=it[p[1]];if(v===null||v===undefined||v==='')return;
      var t=document.createElement('h4');t.textContent=p[0];d.appendChild(t);
      var pre=document.createElement('pre');pre.className='field-'+p[1];pre.textContent=String(v);d.appendChild(pre);});
  }
  function render(){
    var failed=$('f-failed').checked,section=$('f-section').value,verdict=$('f-verdict').value,
        q=$('f-search').value.toLowerCase();
    var body=$('items').tBodies[0];body.textContent='';var n=0,limit=2000;
    items.forEach(function(it){
      if(failed&&it.verdict==='pass')return;
      if(section&&it.section!==section)return;
      if(verdict&&it.verdict!==verdict)return;
      if(q&&(it.id+' '+it.prompt+' '+it.response+' '+it.reason).toLowerCase().indexOf(q)<0)return;
      n++;if(n>limit)return;
      var tr=document.createElement('tr');tr.className='item-row';
      cell(tr,it.id);cell(tr,String(it.sample),'num');cell(tr,it.section);cell(tr,it.type);
      cell(tr,it.verdict,it.verdict.replace(' ','-'));cell(tr,String(it.score),'num');
      cell(tr,(it.response||'').slice(0,120));
      tr.addEventListener('click',function(){show(it);});body.appendChild(tr);});
    $('shown').textContent=n+' of '+items.length+' rows'+(n>limit?' (first '+limit+' listed)':'');
    document.body.setAttribute('data-shown',String(n));
  }
  ['f-failed','f-section','f-verdict'].forEach(function(id){$(id).addEventListener('change',render);});
  $('f-search').addEventListener('input',render);
  render();
  if(params.has('open')){var it=items.filter(function(x){return x.id===params.get('open');})[0];if(it)show(it);}
  document.body.setAttribute('data-ready','1');
})();
"""


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def json_block(element_id: str, data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, default=str)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{e(element_id)}">{text}</script>'


def fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]], numeric_from: int = 1, **attrs: str) -> str:
    a = "".join(f' {k}="{e(v)}"' for k, v in attrs.items())
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i >= numeric_from else ""}>{e(fmt(c))}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table{a}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def img(b64: str | None, alt: str) -> str:
    return f'<img alt="{e(alt)}" src="data:image/png;base64,{b64}">' if b64 else ""


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>'
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")
