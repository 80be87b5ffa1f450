# ruff: noqa: E501  (the script is JavaScript source, kept as written)
"""The inline script and extra styles of ``generation.html`` (plain ES5, no library, no network).

The script reads the items embedded as JSON (``#items``), draws one card per kept item (its
chunk with the support sentence marked, question, answer, kind, checks) with accept / reject /
edit controls, and builds the decisions file on "Download decisions": a first line
``{"review": ..., "set_id": ...}`` naming the set, then one line per decided item
``{"question_id", "decision": "accept"|"reject"|"edit", "question"?, "answer"?}``. All user
text is written through ``esc`` (HTML-escaped).
"""

from __future__ import annotations

REVIEW_CSS = """
.card{border:1px solid var(--line);border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}
.card.accept{border-left:5px solid #1a7f37}.card.reject{border-left:5px solid #cf222e;opacity:.7}
.card.edit{border-left:5px solid #9a6700}
.card h3{font-size:1rem;margin:.2rem 0}
.kind{display:inline-block;background:var(--soft);border:1px solid var(--line);border-radius:3px;
padding:0 .35rem;font-size:.8rem;margin-right:.4rem}
mark{background:#fff8c5;padding:0 .1rem}
.checks{font-size:.8rem;color:var(--muted);margin:.3rem 0}
.decide button{font:inherit;margin-right:.4rem;padding:.15rem .6rem;cursor:pointer}
.decide button.on{font-weight:700;outline:2px solid var(--fg)}
.editor label{display:block;font-size:.85rem;margin:.3rem 0}
.editor input{font:inherit;width:100%}
#bar{position:sticky;top:0;background:#fff;padding:.4rem 0;border-bottom:1px solid var(--line)}
#bar button{font:inherit;padding:.3rem .8rem;cursor:pointer}
"""

REVIEW_SCRIPT = r"""(function(){"use strict";
var ESC={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#x27;"};
function esc(s){return String(s===null||s===undefined?"":s).replace(/[&<>"']/g,function(c){return ESC[c];});}
var D=JSON.parse(document.getElementById("items").textContent),ITEMS=D.items,STATE={};
var list=document.getElementById("list");
function chunkHtml(c){
  var t=c.text,m=c.mark;
  if(!m)return '<pre class="ctext">'+esc(t)+'</pre>';
  return '<pre class="ctext">'+esc(t.slice(0,m[0]))+'<mark>'+esc(t.slice(m[0],m[1]))+'</mark>'+esc(t.slice(m[1]))+'</pre>';
}
function card(it,i){
  var h='<div class="card" id="card-'+i+'" data-qid="'+esc(it.question_id)+'"><h3><span class="kind">'+esc(it.kind)+'</span><span class="ids">'+esc(it.question_id)+'</span></h3>'+
    '<p class="question"><b>Q:</b> <span class="q-text">'+esc(it.question)+'</span></p>'+
    '<p><b>A:</b> <span class="a-text">'+(it.answerable?esc(it.answer):'<span class="nm">not answerable from the corpus (missing: '+esc(it.missing.join(", "))+')</span>')+'</span></p>'+
    '<p class="checks">'+esc(it.checks.join(" \u00b7 "))+'</p>';
  for(var j=0;j<it.chunks.length;j++){var c=it.chunks[j];
    h+='<details class="chunk"'+(j===0?' open':'')+'><summary>'+esc(c.role)+' '+esc(c.chunk_id)+'</summary>'+chunkHtml(c)+'</details>';}
  h+='<div class="decide"><button type="button" data-d="accept">accept</button><button type="button" data-d="reject">reject</button><button type="button" data-d="edit">edit</button> <span class="state nm">undecided</span></div>'+
    '<div class="editor" hidden><label>question <input class="e-question" value="'+esc(it.question)+'"></label>'+
    (it.answerable?'<label>answer <input class="e-answer" value="'+esc(it.answer)+'"></label>':'')+'</div></div>';
  return h;
}
var h="";for(var i=0;i<ITEMS.length;i++)h+=card(ITEMS[i],i);
list.innerHTML=h||'<p class="nm">No item was kept.</p>';
function show(i){
  var el=document.getElementById("card-"+i),d=STATE[i];
  el.className="card"+(d?" "+d:"");
  var bs=el.querySelectorAll(".decide button");for(var j=0;j<bs.length;j++)bs[j].className=bs[j].getAttribute("data-d")===d?"on":"";
  el.querySelector(".state").textContent=d?{accept:"accepted",reject:"rejected",edit:"edited"}[d]:"undecided";
  el.querySelector(".editor").hidden=d!=="edit";
  var n={accept:0,reject:0,edit:0},k;for(k in STATE)if(Object.prototype.hasOwnProperty.call(STATE,k))n[STATE[k]]++;
  document.getElementById("tally").textContent=n.accept+" accepted, "+n.edit+" edited, "+n.reject+" rejected, "+(ITEMS.length-n.accept-n.edit-n.reject)+" undecided";
}
list.addEventListener("click",function(e){var b=e.target;if(!b.hasAttribute||!b.hasAttribute("data-d"))return;
  var el=b.closest(".card"),i=+el.id.slice(5);STATE[i]=b.getAttribute("data-d");show(i);});
function decisions(){
  var out=[JSON.stringify({review:D.schema,set_id:D.set_id,items:ITEMS.length})];
  for(var i=0;i<ITEMS.length;i++){var d=STATE[i];if(!d)continue;
    var row={question_id:ITEMS[i].question_id,decision:d};
    if(d==="edit"){var el=document.getElementById("card-"+i);row.question=el.querySelector(".e-question").value;
      var a=el.querySelector(".e-answer");if(a)row.answer=a.value;}
    out.push(JSON.stringify(row));}
  return out.join("\n")+"\n";
}
window.ragassayDecisions=decisions;
document.getElementById("download").addEventListener("click",function(){
  var blob=new Blob([decisions()],{type:"application/x-ndjson"}),a=document.createElement("a");
  a.href=URL.createObjectURL(blob);a.download="decisions.jsonl";document.body.appendChild(a);a.click();
  setTimeout(function(){URL.revokeObjectURL(a.href);a.remove();},1000);});
document.getElementById("tally").textContent=ITEMS.length+" undecided";
document.documentElement.setAttribute("data-ready","1");
})();"""
