//! What reveals more of a page's comments (issue 41): controls found by what they say, in the
//! language the page declares, never by a widget's own selectors. A control is a button, a
//! `role=button`, a `<summary>`, a button-like input or a link that goes nowhere else; it
//! qualifies when its text (or `aria-label`, `title`, value) offers more ("Load more", "Show 3
//! more replies", "12 Hidden", "Older comments", "加载更多") and does not act on the thread
//! instead (posting, signing in, sorting, voting, sharing, replying), in any language of the
//! vocabulary (the page's and English first). Once the blog's comment
//! rule is known, only controls around the comments are clicked.
//!
//! The paper (§4.1) kept hand-written selectors per comment platform, "the only non-generic
//! elements of our extraction stack"; these words replace them. `[render] show_more` still adds
//! selectors of the user's own.

use serde::Serialize;

/// The words of one language: what offers more on its own, what shows a thread's parts when
/// paired with a "show" word, and what marks a control that must not be clicked.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Words {
    /// The language's primary subtag (`en`, `de`, `zh`…).
    pub lang: &'static str,
    /// Words that offer more on their own ("more", "older", "hidden").
    pub more: &'static [&'static str],
    /// Words that show something ("show", "view").
    pub show: &'static [&'static str],
    /// Words naming a thread's parts ("replies", "comments").
    pub thread: &'static [&'static str],
    /// Words of controls that act instead of revealing ("post", "sort", "like").
    pub not: &'static [&'static str],
    /// Words of a control that turns to the next page of comments ("next", "下一页"): the
    /// page shown is replaced, not grown.
    pub next: &'static [&'static str],
    /// Words naming a page ("page", "Seite"): a control with one and no [`Words::next`] word
    /// goes elsewhere ("Previous page", "Page 1 of 5") and is not clicked.
    pub page: &'static [&'static str],
}

/// The vocabulary, English first (always used, besides the page's language).
pub const WORDS: &[Words] = &[
    Words {
        lang: "en",
        next: &["next", "next page"],
        page: &["page", "pages"],
        more: &[
            "more",
            "load",
            "older",
            "earlier",
            "previous",
            "hidden",
            "expand",
            "all",
            "rest",
            "remaining",
        ],
        show: &["show", "view", "see", "read", "open", "display"],
        thread: &[
            "reply",
            "replies",
            "comment",
            "comments",
            "response",
            "responses",
            "thread",
            "conversation",
            "discussion",
            "answers",
        ],
        not: &[
            "post",
            "submit",
            "send",
            "publish",
            "login",
            "log",
            "sign",
            "register",
            "cancel",
            "preview",
            "edit",
            "delete",
            "report",
            "flag",
            "share",
            "like",
            "upvote",
            "downvote",
            "vote",
            "subscribe",
            "follow",
            "sort",
            "newest",
            "oldest",
            "latest",
            "popular",
            "best",
            "top",
            "hot",
            "write",
            "add",
            "leave",
            "notify",
            "mute",
            "block",
            "ignore",
            "settings",
            "markdown",
            "emoji",
            "upload",
            "guidelines",
            "policy",
            "terms",
            "privacy",
            "next post",
            "previous post",
            "posts",
            "articles",
            "hide",
            "collapse",
            "less",
        ],
    },
    Words {
        lang: "de",
        next: &["nächste", "nächste seite", "weiter"],
        page: &["seite", "seiten"],
        more: &[
            "mehr",
            "weitere",
            "ältere",
            "laden",
            "nachladen",
            "ausgeblendet",
            "alle",
        ],
        show: &["zeige", "zeigen", "anzeigen", "ansehen"],
        thread: &["antworten", "kommentare", "kommentar", "diskussion"],
        not: &[
            "senden",
            "absenden",
            "veröffentlichen",
            "anmelden",
            "abbrechen",
            "vorschau",
            "bearbeiten",
            "löschen",
            "melden",
            "teilen",
            "sortieren",
            "neueste",
            "beliebteste",
            "schreiben",
            "weniger",
            "ausblenden",
        ],
    },
    Words {
        lang: "fr",
        next: &["suivant", "suivante", "page suivante"],
        page: &["page", "pages"],
        more: &[
            "plus",
            "charger",
            "anciens",
            "précédents",
            "masqués",
            "tous",
            "toutes",
        ],
        show: &["afficher", "voir", "montrer"],
        thread: &[
            "réponses",
            "réponse",
            "commentaires",
            "commentaire",
            "discussion",
        ],
        not: &[
            "publier",
            "envoyer",
            "connexion",
            "connecter",
            "annuler",
            "aperçu",
            "modifier",
            "supprimer",
            "signaler",
            "partager",
            "trier",
            "récents",
            "populaires",
            "écrire",
            "moins",
            "masquer",
        ],
    },
    Words {
        lang: "es",
        next: &["siguiente", "página siguiente"],
        page: &["página", "páginas"],
        more: &[
            "más",
            "cargar",
            "anteriores",
            "antiguos",
            "ocultos",
            "todos",
            "todas",
        ],
        show: &["mostrar", "ver"],
        thread: &["respuestas", "respuesta", "comentarios", "comentario"],
        not: &[
            "publicar",
            "enviar",
            "iniciar",
            "cancelar",
            "vista",
            "editar",
            "eliminar",
            "denunciar",
            "compartir",
            "ordenar",
            "recientes",
            "populares",
            "escribir",
            "menos",
            "ocultar",
        ],
    },
    Words {
        lang: "pt",
        next: &["próxima", "próximo", "seguinte"],
        page: &["página", "páginas"],
        more: &[
            "mais",
            "carregar",
            "anteriores",
            "antigos",
            "ocultos",
            "todos",
            "todas",
        ],
        show: &["mostrar", "ver", "exibir"],
        thread: &["respostas", "resposta", "comentários", "comentário"],
        not: &[
            "publicar",
            "enviar",
            "entrar",
            "cancelar",
            "editar",
            "excluir",
            "denunciar",
            "compartilhar",
            "ordenar",
            "recentes",
            "populares",
            "escrever",
            "menos",
            "ocultar",
        ],
    },
    Words {
        lang: "it",
        next: &["successiva", "successivo", "prossima", "avanti"],
        page: &["pagina", "pagine"],
        more: &[
            "altri",
            "altro",
            "carica",
            "precedenti",
            "nascosti",
            "tutti",
            "tutte",
        ],
        show: &["mostra", "visualizza", "vedi"],
        thread: &["risposte", "risposta", "commenti", "commento"],
        not: &[
            "pubblica",
            "invia",
            "accedi",
            "annulla",
            "anteprima",
            "modifica",
            "elimina",
            "segnala",
            "condividi",
            "ordina",
            "recenti",
            "popolari",
            "scrivi",
            "meno",
            "nascondi",
        ],
    },
    Words {
        lang: "nl",
        next: &["volgende"],
        page: &["pagina", "pagina's"],
        more: &["meer", "laden", "oudere", "eerdere", "verborgen", "alle"],
        show: &["toon", "tonen", "bekijk", "bekijken"],
        thread: &["reacties", "reactie", "antwoorden", "opmerkingen"],
        not: &[
            "plaatsen",
            "verzenden",
            "inloggen",
            "annuleren",
            "bewerken",
            "verwijderen",
            "melden",
            "delen",
            "sorteren",
            "nieuwste",
            "populairste",
            "schrijven",
            "minder",
            "verbergen",
        ],
    },
    Words {
        lang: "pl",
        next: &["następna", "następny", "dalej"],
        page: &["strona", "strony"],
        more: &[
            "więcej",
            "załaduj",
            "wczytaj",
            "starsze",
            "ukryte",
            "wszystkie",
        ],
        show: &["pokaż", "zobacz", "wyświetl"],
        thread: &[
            "odpowiedzi",
            "odpowiedź",
            "komentarze",
            "komentarzy",
            "komentarz",
        ],
        not: &[
            "opublikuj",
            "wyślij",
            "zaloguj",
            "anuluj",
            "edytuj",
            "usuń",
            "zgłoś",
            "udostępnij",
            "sortuj",
            "najnowsze",
            "napisz",
            "mniej",
            "ukryj",
        ],
    },
    Words {
        lang: "ru",
        next: &["следующая", "далее", "вперёд", "вперед"],
        page: &["страница", "страницы"],
        more: &[
            "ещё",
            "еще",
            "больше",
            "загрузить",
            "старые",
            "предыдущие",
            "скрытые",
            "все",
        ],
        show: &["показать", "смотреть", "открыть"],
        thread: &["ответы", "ответов", "ответа", "комментарии", "комментариев"],
        not: &[
            "отправить",
            "опубликовать",
            "войти",
            "отмена",
            "редактировать",
            "удалить",
            "пожаловаться",
            "поделиться",
            "сортировать",
            "новые",
            "написать",
            "меньше",
            "скрыть",
        ],
    },
    Words {
        lang: "sv",
        next: &["nästa"],
        page: &["sida", "sidor"],
        more: &["mer", "fler", "ladda", "äldre", "dolda", "alla"],
        show: &["visa", "se"],
        thread: &["svar", "kommentarer", "kommentar"],
        not: &[
            "skicka",
            "publicera",
            "logga",
            "avbryt",
            "redigera",
            "radera",
            "anmäl",
            "dela",
            "sortera",
            "nyaste",
            "skriv",
            "färre",
            "dölj",
        ],
    },
    Words {
        lang: "fa",
        next: &["بعدی"],
        page: &["صفحه"],
        more: &["بیشتر", "مخفی", "بارگذاری", "قدیمی‌تر", "قبلی", "همه"],
        show: &["نمایش", "مشاهده", "دیدن"],
        thread: &["پاسخ", "پاسخ‌ها", "دیدگاه", "دیدگاه‌ها", "نظر", "نظرات"],
        not: &[
            "ارسال",
            "ورود",
            "لغو",
            "پیش‌نمایش",
            "ویرایش",
            "حذف",
            "گزارش",
            "اشتراک",
            "مرتب",
            "جدیدترین",
            "نوشتن",
            "کمتر",
            "پنهان کردن",
        ],
    },
    Words {
        lang: "ar",
        next: &["التالي", "التالية"],
        page: &["صفحة"],
        more: &[
            "المزيد",
            "أكثر",
            "تحميل",
            "مخفية",
            "الأقدم",
            "السابقة",
            "الكل",
        ],
        show: &["عرض", "إظهار"],
        thread: &["الردود", "ردود", "التعليقات", "تعليقات", "تعليق"],
        not: &[
            "إرسال",
            "نشر",
            "تسجيل",
            "إلغاء",
            "معاينة",
            "تعديل",
            "حذف",
            "إبلاغ",
            "مشاركة",
            "ترتيب",
            "الأحدث",
            "اكتب",
            "أقل",
            "إخفاء",
        ],
    },
    Words {
        lang: "tr",
        next: &["sonraki", "ileri"],
        page: &["sayfa"],
        more: &["daha", "fazla", "yükle", "eski", "önceki", "gizli", "tümü"],
        show: &["göster", "gör"],
        thread: &["yanıtlar", "yanıt", "yorumlar", "yorum", "cevaplar"],
        not: &[
            "gönder",
            "yayınla",
            "giriş",
            "iptal",
            "önizleme",
            "düzenle",
            "sil",
            "bildir",
            "paylaş",
            "sırala",
            "en yeni",
            "yaz",
            "daha az",
            "gizle",
        ],
    },
    Words {
        lang: "zh",
        next: &["下一页", "下一頁", "下页", "后页"],
        page: &["页", "頁"],
        more: &[
            "更多", "加载", "載入", "展开", "展開", "隐藏", "隱藏", "全部", "更早", "以前",
        ],
        show: &["查看", "显示", "顯示", "看"],
        thread: &["回复", "回覆", "评论", "評論", "条", "則"],
        not: &[
            "发送", "發送", "提交", "发表", "發表", "登录", "登入", "取消", "预览", "預覽", "编辑",
            "編輯", "删除", "刪除", "举报", "分享", "点赞", "排序", "最新", "最热", "收起",
        ],
    },
    Words {
        lang: "ja",
        next: &["次へ", "次のページ"],
        page: &["ページ"],
        more: &[
            "もっと",
            "さらに",
            "続き",
            "読み込む",
            "非表示",
            "すべて",
            "過去",
        ],
        show: &["表示", "見る"],
        thread: &["返信", "コメント", "件"],
        not: &[
            "送信",
            "投稿する",
            "ログイン",
            "キャンセル",
            "プレビュー",
            "編集",
            "削除",
            "通報",
            "共有",
            "並び替え",
            "新しい順",
            "閉じる",
        ],
    },
    Words {
        lang: "ko",
        next: &["다음"],
        page: &["페이지"],
        more: &["더보기", "더", "불러오기", "이전", "숨김", "전체"],
        show: &["보기", "표시"],
        thread: &["답글", "댓글", "개"],
        not: &[
            "등록",
            "작성",
            "로그인",
            "취소",
            "미리보기",
            "수정",
            "삭제",
            "신고",
            "공유",
            "정렬",
            "최신순",
            "접기",
        ],
    },
];

/// The words used on a page that declares `lang` (a BCP 47 tag or none): English, and the
/// page's language when the vocabulary has it.
pub fn words_for(lang: Option<&str>) -> Vec<Words> {
    let primary = lang
        .and_then(|l| l.split(['-', '_']).next())
        .map(str::to_ascii_lowercase);
    WORDS
        .iter()
        .filter(|w| w.lang == "en" || primary.as_deref() == Some(w.lang))
        .copied()
        .collect()
}

/// Marks the control clicked last as fruitless (its click showed no more text than the frame
/// ever had): it is not clicked again on this page.
pub const MARK_FRUITLESS: &str = r#"(() => {
  const el = window.__everblogLastClicked;
  if (el && window.__everblogClicked) window.__everblogClicked.set(el, 'fruitless');
  // A widget that draws its controls anew after each click makes new elements: a label
  // fruitless twice is not clicked again either.
  const labels = window.__everblogFruitlessLabels = window.__everblogFruitlessLabels || new Map();
  const label = window.__everblogLastLabel;
  if (label) labels.set(label, (labels.get(label) || 0) + 1);
  return true;
})()"#;

/// The length of the frame's visible text: what a click that reveals comments makes grow.
pub const TEXT_SIZE: &str = "document.body ? document.body.innerText.length : 0";

/// Ends a page turn [`click_more`] began: when the comments shown before the click are gone
/// (the widget replaced them with the next page rather than adding to them), a copy of what
/// was shown is kept in the page, inert, in a `<div data-everblog-page=N>` placed after the
/// widget (the nearest element with an `id` around the comments, outside what the widget
/// redraws), so that every page's comments are in the one DOM read at the end. True when a
/// page was kept; false when no turn was pending or the click added instead of replacing.
pub const COMMIT_TURN: &str = r#"(() => {
  const t = window.__everblogTurn;
  window.__everblogTurn = null;
  if (!t) return false;
  const host = t.root === document ? document.body : t.root;
  const now = host.innerText || '';
  if (!t.lines.length || t.lines.every(l => now.includes(l))) return false;
  const snap = document.createElement('div');
  snap.setAttribute('data-everblog-page', String(t.page));
  snap.inert = true;
  snap.appendChild(t.clone);
  let at = t.anchor && t.anchor.isConnected ? t.anchor : null;
  if (at) {
    while (at.nextElementSibling && at.nextElementSibling.hasAttribute('data-everblog-page')) at = at.nextElementSibling;
    at.after(snap);
  } else {
    host.appendChild(snap);
  }
  window.__everblogPageNo = t.page + 1;
  return true;
})()"#;

/// Clicks the first control of the frame that reveals more comments and was not found
/// fruitless ([`MARK_FRUITLESS`]; a "load more" that stays there loads again): the user's `extra` selectors
/// first, then any control the vocabulary says offers more (the frame's language, `<html
/// lang>`, and English first, then every other: a widget may speak another language than the
/// page around it); within `scope` (a CSS selector of the comments' elements: the
/// controls around them) when given and present in the frame. A control is a button, a link,
/// a `role=button`, or any element drawn with a pointer cursor (a widget's `<div>` button).
/// When nothing offers more, it turns the page: a "next" control ([`Words::next`]) or the
/// numbered one after the page shown; what the page showed is kept by [`COMMIT_TURN`], which
/// the caller runs once the page settled. True when something was clicked.
pub fn click_more(extra: &[String], scope: Option<&str>) -> String {
    let all = serde_json::to_string(WORDS).expect("words serialise");
    let extra = serde_json::to_string(extra).expect("strings serialise");
    let scope = serde_json::to_string(&scope).expect("string serialises");
    format!(
        r#"(() => {{
  const ALL = {all}, EXTRA = {extra}, SCOPE = {scope}, FRUITLESS = 'fruitless';
  const lang = ((document.documentElement.getAttribute('lang') || '').split(/[-_]/)[0] || '').toLowerCase();
  // The page's language and English first; the others too, since a widget may speak
  // another language than the page around it.
  const words = ALL.filter(w => w.lang === 'en' || w.lang === lang).concat(ALL.filter(w => w.lang !== 'en' && w.lang !== lang));
  const cjk = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;
  const has = (label, list) => list.some(w => cjk.test(w) || w.includes(' ')
    ? label.includes(w)
    : new RegExp('(^|[^\\p{{L}}\\p{{N}}])' + w.replace(/[.*+?^${{}}()|[\]\\]/g, '\\$&') + '($|[^\\p{{L}}\\p{{N}}])', 'u').test(label));
  const any = (label, part) => words.some(w => has(label, w[part]));
  // A page turn ("Next page", "›") replaces what is shown; "Previous page", "Page 1 of 5" go
  // elsewhere.
  const turns = label => !!label && label.length <= 40 && !any(label, 'not')
    && (any(label, 'next') || /^[›»→>]+$/.test(label));
  const offers = label => {{
    if (!label || label.length > 80) return false;
    if (any(label, 'not') || any(label, 'next') || any(label, 'page')) return false;
    if (any(label, 'more')) return true;
    if (any(label, 'show') && any(label, 'thread')) return true;
    return /\p{{N}}/u.test(label) && any(label, 'thread');
  }};
  const classed = (el, re) => re.test(el.getAttribute('class') || '');
  const visible = el => {{
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden' || el.disabled) return false;
    if (el.getAttribute('aria-disabled') === 'true' || classed(el, /(^|[\s_-])disabled($|[\s_-])/i)) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }};
  const navigates = el => {{
    if (el.tagName !== 'A') return false;
    const href = (el.getAttribute('href') || '').trim();
    if (!href || href.startsWith('#') || href.toLowerCase().startsWith('javascript:')) return false;
    try {{
      const u = new URL(href, location.href), here = new URL(location.href);
      u.hash = ''; here.hash = '';
      return u.href !== here.href;
    }} catch (e) {{ return true; }}
  }};
  const submits = el => {{
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (type === 'submit' || type === 'reset') return true;
    return el.tagName === 'BUTTON' && !type && !!el.closest('form');
  }};
  const kept = el => !!el.closest('[data-everblog-page]');
  let root = document;
  if (SCOPE) {{
    const found = Array.from(document.querySelectorAll(SCOPE)).filter(e => !kept(e));
    if (found.length) {{
      // The comments' lowest common ancestor, then three levels up: the widget around them.
      let lca = found[0].parentElement;
      while (lca && !found.every(e => lca.contains(e))) lca = lca.parentElement;
      for (let i = 0; i < 3 && lca && lca.parentElement && lca !== document.body; i++) lca = lca.parentElement;
      if (lca) root = lca;
    }}
  }}
  window.__everblogClicked = window.__everblogClicked || new WeakMap();
  const fruitlessLabels = window.__everblogFruitlessLabels || new Map();
  // A control that may be clicked: shown, not a kept page's, going nowhere else, posting
  // nothing, and not found fruitless (nor its label, twice).
  const clickable = (el, label) => !kept(el) && visible(el) && !navigates(el) && !submits(el)
    && window.__everblogClicked.get(el) !== FRUITLESS
    && !(label && (fruitlessLabels.get(label) || 0) >= 2);
  const tryClick = (el, label) => {{
    if (!clickable(el, label)) return false;
    window.__everblogClicked.set(el, 1);
    window.__everblogLastClicked = el;
    window.__everblogLastLabel = label;
    el.scrollIntoView({{ block: 'center' }});
    el.click();
    return true;
  }};
  for (const sel of EXTRA) {{
    let els;
    try {{ els = document.querySelectorAll(sel); }} catch (e) {{ continue; }}
    for (const el of els) if (tryClick(el, '')) return true;
  }}
  const labelOf = el => (el.getAttribute('aria-label') || el.innerText || el.value || el.getAttribute('title') || '')
    .replace(/\s+/g, ' ').trim().toLowerCase();
  const CONTROLS = 'button, [role=button], a, summary, input[type=button], [aria-expanded=false]';
  // Controls, then what only its pointer cursor shows to be one (a widget's <div> button).
  const controls = Array.from(root.querySelectorAll(CONTROLS)).concat(
    Array.from(root.querySelectorAll('div, span, li, i')).filter(el =>
      !el.matches(CONTROLS) && (el.getAttribute('aria-label') || el.textContent.length <= 80)
      && getComputedStyle(el).cursor === 'pointer'
      && !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer' && !el.getAttribute('aria-label'))));
  const labelled = controls.map(el => [el, labelOf(el)]);
  for (const [el, label] of labelled) {{
    if (!offers(label)) continue;
    if (tryClick(el, label.replace(/\p{{N}}+/gu, '#'))) return true;
  }}
  // Turning the page: "next", or the number after the page shown (in a group that also shows
  // the page before it).
  const pageNo = window.__everblogPageNo || 1;
  const numbered = el => {{
    let group = el.parentElement;
    for (let i = 0; i < 2 && group; i++, group = group.parentElement) {{
      const numbers = Array.from(group.querySelectorAll('*')).filter(e => !e.children.length)
        .map(e => (e.textContent || '').trim());
      if (numbers.includes(String(pageNo))) return true;
    }}
    return false;
  }};
  const turn = labelled.find(([el, label]) => turns(label) && clickable(el, label))
    || labelled.find(([el, label]) => label === String(pageNo + 1) && clickable(el, label) && numbered(el));
  if (!turn) return false;
  const [el, label] = turn;
  // What the turn replaces: the first ancestor holding more than the pager.
  const size = e => (e.innerText || '').length;
  let area = el.parentElement;
  while (area && area !== document.body && area.parentElement && size(area) < size(el) + 200) area = area.parentElement;
  if (!area) return false;
  let anchor = area;
  while (anchor && !anchor.id && anchor.parentElement && anchor.parentElement !== document.body) anchor = anchor.parentElement;
  const lines = (area.innerText || '').split('\n').map(l => l.trim()).filter(l => l.length >= 8)
    .sort((a, b) => b.length - a.length).slice(0, 3);
  const clone = area.cloneNode(true);
  if (!tryClick(el, label)) return false;
  window.__everblogTurn = {{ root, anchor, clone, lines, page: pageNo }};
  return true;
}})()"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_and_the_pages_language() {
        let w = words_for(Some("de-AT"));
        assert_eq!(w.iter().map(|w| w.lang).collect::<Vec<_>>(), ["en", "de"]);
        assert_eq!(words_for(None).len(), 1);
        assert_eq!(words_for(Some("xx")).len(), 1);
        let js = click_more(&["button.more".into()], Some("[class=\"c\"]"));
        assert!(js.contains("button.more") && js.contains("更多"));
    }
}
