"""Old and variant kanji forms folded to the forms the rules are written in (豫示 → 予示, 總コスト → 総コスト).

Contract: :data:`VARIANTS` is the one table (each key and value one character, so folding keeps every offset);
:func:`normalise` applies it. The search analysis applies it after the fold (:func:`kb.search.analysis.fold`), to
indexed texts and queries alike, and the static search gets the table through
:func:`kb.site.search_export.browser_constants` (``variants``) and applies it after its own fold.
"""

from __future__ import annotations

# old form (旧字体) or common variant → the form of the Jōyō table (新字体); pairs of one character each
_PAIRS = (
    "亞亜 惡悪 壓圧 圍囲 爲為 醫医 壹一 隱隠 榮栄 營営 衞衛 驛駅 圓円 鹽塩 應応 歐欧 毆殴 櫻桜 假仮 價価 畫画 會会 囘回 壞壊"
    " 懷懐 繪絵 擴拡 覺覚 學学 嶽岳 樂楽 勸勧 卷巻 歡歓 觀観 關関 陷陥 巖巌 顏顔 歸帰 氣気 龜亀 僞偽 戲戯 犧犠 舊旧 據拠 擧挙"
    " 峽峡 挾挟 狹狭 曉暁 區区 驅駆 勳勲 徑径 惠恵 溪渓 經経 繼継 莖茎 螢蛍 輕軽 鷄鶏 缺欠 儉倹 劍剣 圈圏 檢検 權権 獻献 縣県"
    " 險険 顯顕 驗験 嚴厳 效効 廣広 恆恒 鑛鉱 號号 國国 黑黒 濟済 碎砕 齋斎 劑剤 雜雑 參参 慘惨 棧桟 蠶蚕 贊賛 殘残 絲糸 齒歯"
    " 兒児 辭辞 濕湿 實実 寫写 釋釈 壽寿 收収 從従 澁渋 獸獣 縱縦 肅粛 處処 緖緒 敍叙 奬奨 將将 燒焼 稱称 證証 乘乗 剩剰 壤壌"
    " 孃嬢 條条 淨浄 疊畳 讓譲 釀醸 囑嘱 觸触 寢寝 愼慎 眞真 盡尽 圖図 粹粋 醉酔 隨随 髓髄 數数 樞枢 聲声 靜静 齊斉 攝摂 竊窃"
    " 專専 戰戦 淺浅 潛潜 纖繊 踐践 錢銭 禪禅 雙双 壯壮 搜捜 插挿 爭争 總総 聰聡 莊荘 裝装 騷騒 臟臓 藏蔵 屬属 續続 墮堕 體体"
    " 對対 帶帯 滯滞 臺台 瀧滝 擇択 澤沢 單単 擔担 膽胆 團団 彈弾 斷断 癡痴 遲遅 晝昼 蟲虫 鑄鋳 廳庁 徵徴 聽聴 敕勅 鎭鎮 遞逓"
    " 鐵鉄 轉転 點点 傳伝 黨党 盜盗 燈灯 當当 鬪闘 德徳 獨独 讀読 屆届 繩縄 貳弐 惱悩 腦脳 霸覇 廢廃 拜拝 賣売 麥麦 發発 髮髪"
    " 拔抜 蠻蛮 祕秘 濱浜 甁瓶 拂払 佛仏 竝並 變変 邊辺 辨弁 瓣弁 辯弁 舖舗 寶宝 豐豊 沒没 萬万 滿満 默黙 彌弥 譯訳 藥薬 與与"
    " 豫予 餘余 譽誉 搖揺 樣様 謠謡 來来 亂乱 覽覧 兩両 獵猟 綠緑 壘塁 勵励 禮礼 靈霊 齡齢 戀恋 爐炉 勞労 樓楼 祿禄 灣湾 稅税"
    " 步歩 每毎 卽即 增増 髙高 﨑崎 槪概 擊撃 攪撹 狀状"
).split()
VARIANTS: dict[str, str] = {pair[0]: pair[1] for pair in _PAIRS}
_TABLE = str.maketrans(VARIANTS)


def normalise(text: str) -> str:
    """``text`` with every variant form of :data:`VARIANTS` replaced by its standard form (same length)."""
    return text if text.isascii() else text.translate(_TABLE)
