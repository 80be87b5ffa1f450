# ruff: noqa: E501  (the scripts are JavaScript source, kept as written)
"""The two small inline scripts of the report pages (plain ES5, no library, no network).

:data:`SCRIPT` (report.html) reads the rows embedded as JSON (``#rows``, ``#chunks``), draws
the filter and sort controls, the question list a page at a time, and a question's details
when it is opened. :data:`COMPARE_SCRIPT` (the comparison page) opens a flipped question side
by side from ``#pairs``. Both write user text only through ``esc`` (HTML-escaped).
"""

from __future__ import annotations

# Shared helpers: escaping, verdicts, a chunk list with the k cut-off, an answer block.
_COMMON = r"""
var ESC={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#x27;"};
function esc(s){return String(s===null||s===undefined?"":s).replace(/[&<>"']/g,function(c){return ESC[c];});}
function vt(v){return v===null||v===undefined?"\u2014":(v?"yes":"no");}
function cat(l){return l.split(".")[0];}
function short(l){var i=l.indexOf(".");return i<0?l:l.slice(i+1);}
function json(id){var el=document.getElementById(id);return el?JSON.parse(el.textContent):null;}
var TEXTS=json("chunks")||{};
var FIELDS=["id","q","topic","ans","st","c","gr","rank","top","lab","ret","nret","gold","gri","text","cit","cited","nm","ev"];
var CH={"y":true,"n":false,"-":null};
function decode(a,S){
  var r={},i;for(i=0;i<FIELDS.length;i++)r[FIELDS[i]]=i<a.length?a[i]:null;
  function str(i){return i===null||i===undefined?null:S[i];}
  function un(v){if(typeof v==="string")return v.charAt(0)==="~"?S[+v.slice(1)]:v;
    if(Array.isArray(v))return v.map(un);
    if(v&&typeof v==="object"){var o={};for(var key in v)if(Object.prototype.hasOwnProperty.call(v,key))o[un(key)]=un(v[key]);return o;}
    return v;}
  r.lab=(r.lab||[]).map(str);r.topic=str(r.topic);r.st=str(r.st);r.gr=str(r.gr)||"";r.nm=str(r.nm);
  r.gold=(r.gold||[]).map(str);r.c=r.c.split("").map(function(x){return CH[x];});
  var g={};r.gold.forEach(function(x){g[x]=1;});
  r.ret=(r.ret||[]).map(function(c,i){return [c.length>2?c[3]:i+1,S[c[0]],c[1],c.length>2?c[2]:(g[S[c[0]]]?1:0)];});
  if(r.nret===null)r.nret=r.ret.length;
  if(r.cit!==null){r.cit=r.cit.map(function(c){return [S[c[0]],c[1]];});r.cited=(r.cited||[]).map(str);}
  else{delete r.text;}
  if(r.ev){var e={},ev=un(r.ev);r.lab.forEach(function(l,i){e[l]=ev[i];});r.ev=e;}
  return r;
}
function chunkText(id){
  if(!Object.prototype.hasOwnProperty.call(TEXTS,id))return '<span class="nm">text not recorded</span>';
  return '<details class="chunk"><summary>text</summary><pre class="ctext">'+esc(TEXTS[id])+'</pre></details>';
}
function retrievedTable(r,k){
  if(!r.ret.length)return '<h4>Retrieved</h4><p class="nm">no retrieved chunks recorded</p>';
  var h='<h4>Retrieved (top '+r.ret.length+' of '+r.nret+'; found@'+k+' counts ranks 1\u2013'+k+')</h4>'+
    '<table class="chunks"><thead><tr><th>rank</th><th>chunk</th><th>score</th><th></th><th>text</th></tr></thead><tbody>';
  for(var i=0;i<r.ret.length;i++){
    var c=r.ret[i];
    h+='<tr'+(c[0]>k?' class="beyond"':'')+'><td class="num">'+esc(c[0])+'</td><td class="ids">'+esc(c[1])+
      '</td><td class="num">'+(c[2]===null?"\u2014":Number(c[2]).toFixed(4))+'</td><td>'+
      (c[3]?'<span class="gold">gold</span>':'')+'</td><td>'+chunkText(c[1])+'</td></tr>';
    if(c[0]===k&&i<r.ret.length-1)h+='<tr class="cut"><td colspan="5">k = '+k+' cut-off</td></tr>';
  }
  return h+'</tbody></table>';
}
function goldLine(r){
  if(!r.gold.length)return '<p class="nm">No gold chunk for this question.</p>';
  var seen={},i;for(i=0;i<r.ret.length;i++)seen[r.ret[i][1]]=1;
  var h='<h4>Gold</h4><ul class="gold-list">';
  for(i=0;i<r.gold.length;i++){
    var g=r.gold[i],rk=r.gri&&r.gri[g]!==undefined?' (rank '+esc(r.gri[g])+' in the whole index)':'';
    h+='<li><span class="ids">'+esc(g)+'</span>'+rk+(seen[g]?'':' <span class="nm">not retrieved</span> '+chunkText(g))+'</li>';
  }
  return h+'</ul>';
}
function answerBlock(r){
  if(r.text===undefined)return '<h4>Not measured</h4><p class="nm">'+esc(r.nm||"\u2014")+'</p>';
  var h='<h4>Answer <span class="nm">('+esc(r.st)+')</span></h4><p class="answer">'+esc(r.text||"\u2014")+'</p><h4>Citations</h4>';
  var ids=[],src={},page={},i,gold={};
  for(i=0;i<r.gold.length;i++)gold[r.gold[i]]=1;
  for(i=0;i<r.cit.length;i++){var c=r.cit[i][0];if(!src[c]){ids.push(c);src[c]=[];}src[c].push("listed");if(r.cit[i][1]!==null)page[c]=r.cit[i][1];}
  for(i=0;i<r.cited.length;i++){var d=r.cited[i];if(!src[d]){ids.push(d);src[d]=[];}if(src[d].indexOf("listed")<0)src[d].push("inline");}
  if(!ids.length)return h+'<p class="nm">none</p>';
  h+='<ul class="cites">';
  for(i=0;i<ids.length;i++){var x=ids[i];
    h+='<li><span class="ids">'+esc(x)+'</span>'+(page[x]!==undefined?', page '+esc(page[x]):'')+
      ' <span class="src">'+esc(src[x].join(" + "))+'</span>'+(gold[x]?' <span class="gold">gold</span>':'')+' '+chunkText(x)+'</li>';}
  return h+'</ul>';
}
function detail(r,k){
  var h=answerBlock(r)+retrievedTable(r,k)+goldLine(r);
  if(r.ev){h+='<h4>Failure evidence</h4><ul class="evidence">';
    for(var l in r.ev)if(Object.prototype.hasOwnProperty.call(r.ev,l))h+='<li><span class="tag" title="'+esc(l)+'">'+esc(short(l))+'</span> '+esc(r.ev[l])+'</li>';
    h+='</ul>';}
  return h;
}
"""

SCRIPT = r"""(function(){"use strict";
""" + _COMMON + r"""
var D=json("rows"),ROWS=D.rows.map(function(r){return decode(r,D.strings);}),K=D.k,COL=D.colors,PAGE=100,shown=PAGE;
var table=document.getElementById("qtable"),controls=document.getElementById("controls"),pager=document.getElementById("pager");
function labels(r){if(!r.lab.length)return "\u2014";var h="";for(var i=0;i<r.lab.length;i++){var l=r.lab[i];
  h+='<span class="tag" style="border-color:'+esc(COL[cat(l)]||"#999999")+'" title="'+esc(l)+'">'+esc(short(l))+'</span>';}return h;}
function rankText(v){var t=D.ranks[v===null||v===undefined?"null":String(v)];return t===undefined?String(v):t;}
function rowHtml(r,i){
  return '<tbody class="q'+(r.lab.length?' fail':'')+'"><tr class="main"><td class="ids">'+esc(r.id)+'</td><td class="question">'+esc(r.q)+
    '</td><td class="num">'+esc(rankText(r.rank))+'</td><td>'+vt(r.c[0])+'</td><td>'+esc(vt(r.c[1])+(r.gr?" ("+r.gr+")":""))+
    '</td><td>'+vt(r.c[2])+'</td><td>'+labels(r)+'</td></tr><tr class="more"><td></td><td colspan="6"><details data-i="'+i+
    '"><summary>answer, citations, retrieved chunks, failure evidence</summary><div class="detail"></div></details></td></tr></tbody>';
}
function uniq(f){var s={},out=[];ROWS.forEach(function(r){[].concat(f(r)).forEach(function(v){var key=v===null||v===undefined?"(none)":String(v);if(!s[key]){s[key]=1;out.push(key);}});});return out.sort();}
function select(id,label,opts){var h='<label>'+esc(label)+' <select id="'+id+'"><option value="">any</option>';
  opts.forEach(function(o){h+='<option value="'+esc(o)+'">'+esc(o)+'</option>';});return h+'</select></label> ';}
var checks=["found@"+K,"grounded","right"];
var h='<div class="filters">'+select("f-label","failure label",["(any failure)","(no failure)"].concat(uniq(function(r){return r.lab;})))+
  select("f-cat","category",uniq(function(r){return r.lab.map(cat);}))+select("f-topic","topic",uniq(function(r){return r.topic;}))+
  select("f-status","status",uniq(function(r){return r.st===null?"(no prediction)":r.st;}));
checks.forEach(function(c,i){h+=select("f-c"+i,c,["yes","no","\u2014"]);});
h+='<label>search <input id="f-text" type="search" placeholder="id, question, answer"></label> '+
  '<label>sort <select id="f-sort"><option value="fail">failing first</option><option value="rank">rank (best first)</option>'+
  '<option value="rank-d">rank (worst first)</option><option value="score-d">top score (highest first)</option>'+
  '<option value="score">top score (lowest first)</option><option value="id">id</option></select></label></div><p id="count" class="count"></p>';
controls.innerHTML=h;
function val(id){return document.getElementById(id).value;}
function rankKey(r){return r.rank===null||r.rank===undefined?Infinity:(r.rank===0?1e9:r.rank);}
function scoreKey(r){return r.top===null||r.top===undefined?-Infinity:r.top;}
var order=ROWS.map(function(r,i){return i;}),current=order;
function apply(){
  var lab=val("f-label"),c=val("f-cat"),t=val("f-topic"),st=val("f-status"),q=val("f-text").toLowerCase(),cs=[val("f-c0"),val("f-c1"),val("f-c2")];
  var out=order.filter(function(i){var r=ROWS[i];
    if(lab==="(any failure)"&&!r.lab.length)return false;
    if(lab==="(no failure)"&&r.lab.length)return false;
    if(lab&&lab[0]!=="("&&r.lab.indexOf(lab)<0)return false;
    if(c&&!r.lab.some(function(l){return cat(l)===c;}))return false;
    if(t&&(r.topic===null?"(none)":r.topic)!==t)return false;
    if(st&&(r.st===null?"(no prediction)":r.st)!==st)return false;
    for(var j=0;j<3;j++)if(cs[j]&&vt(r.c[j])!==cs[j])return false;
    if(q&&(r.id+"\n"+r.q+"\n"+(r.text||"")).toLowerCase().indexOf(q)<0)return false;
    return true;});
  var s=val("f-sort"),cmp=null;
  if(s==="rank")cmp=function(a,b){return rankKey(ROWS[a])-rankKey(ROWS[b])||a-b;};
  if(s==="rank-d")cmp=function(a,b){return rankKey(ROWS[b])-rankKey(ROWS[a])||a-b;};
  if(s==="score-d")cmp=function(a,b){return scoreKey(ROWS[b])-scoreKey(ROWS[a])||a-b;};
  if(s==="score")cmp=function(a,b){return scoreKey(ROWS[a])-scoreKey(ROWS[b])||a-b;};
  if(s==="id")cmp=function(a,b){var x=ROWS[a].id,y=ROWS[b].id;return x<y?-1:(x>y?1:a-b);};
  if(cmp)out.sort(cmp);
  current=out;shown=PAGE;draw();
}
function draw(){
  while(table.tBodies.length)table.removeChild(table.tBodies[0]);
  var n=Math.min(shown,current.length),h="",i;
  for(i=0;i<n;i++)h+=rowHtml(ROWS[current[i]],current[i]);
  table.insertAdjacentHTML("beforeend",h);
  document.getElementById("count").textContent=current.length+" of "+ROWS.length+" questions match; showing "+n+".";
  pager.innerHTML=n<current.length?'<button type="button" id="more">show '+Math.min(PAGE,current.length-n)+' more</button>':"";
}
table.addEventListener("toggle",function(e){var d=e.target;if(!d.open||!d.hasAttribute("data-i"))return;
  var box=d.querySelector(".detail");if(!box.hasChildNodes())box.innerHTML=detail(ROWS[+d.getAttribute("data-i")],K);},true);
pager.addEventListener("click",function(e){if(e.target.id==="more"){shown+=PAGE;draw();}});
controls.addEventListener("change",apply);
controls.addEventListener("input",function(e){if(e.target.id==="f-text")apply();});
var note=document.getElementById("static-note");if(note)note.style.display="none";
apply();
document.documentElement.setAttribute("data-ready",String(Math.round(performance.now())));
})();"""

COMPARE_SCRIPT = r"""(function(){"use strict";
""" + _COMMON + r"""
var P=json("pairs");P.pairs.forEach(function(p){p.runs=p.runs.map(function(r){return r&&decode(r,P.strings);});});
document.addEventListener("toggle",function(e){var d=e.target;if(!d.open||!d.hasAttribute("data-pair"))return;
  var box=d.querySelector(".side");if(box.hasChildNodes())return;var p=P.pairs[+d.getAttribute("data-pair")],h="";
  for(var j=0;j<2;j++){var r=p.runs[j];h+='<div class="half"><h3>'+esc(P.names[p.idx[j]])+'</h3>'+(r?detail(r,P.ks[p.idx[j]]):'<p class="nm">not in this run</p>')+'</div>';}
  box.innerHTML=h;},true);
function filter(bar){
  var dir=bar.querySelector(".f-dir").value,chk=bar.querySelector(".f-check").value,table=bar.nextElementSibling.querySelector("table"),n=0,all=table.tBodies.length;
  for(var i=0;i<all;i++){var b=table.tBodies[i],ok=(!dir||b.getAttribute("data-dir")===dir)&&(!chk||(" "+b.getAttribute("data-checks")+" ").indexOf(" "+chk+" ")>=0);
    b.style.display=ok?"":"none";if(ok)n++;}
  bar.querySelector(".count").textContent=n+" of "+all+" shown";
}
var bars=document.querySelectorAll(".filters[data-cand]");
for(var i=0;i<bars.length;i++){(function(bar){bar.addEventListener("change",function(){filter(bar);});filter(bar);})(bars[i]);}
document.documentElement.setAttribute("data-ready","1");
})();"""
