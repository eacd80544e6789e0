"""Language names: one language spelled twice in one corpus is refused, never loaded as two; every
FLORES-200 file name loads as its own language (the whole folder, 204 files, their own names)."""

from __future__ import annotations

import pytest

from tokstat import TokstatError, load_corpus
from tokstat.cli import main

#: the 204 FLORES-200 languages (file stems of flores200_dataset/dev/*.dev)
FLORES200 = """ace_Arab ace_Latn acm_Arab acq_Arab aeb_Arab afr_Latn ajp_Arab aka_Latn amh_Ethi apc_Arab arb_Arab
arb_Latn ars_Arab ary_Arab arz_Arab asm_Beng ast_Latn awa_Deva ayr_Latn azb_Arab azj_Latn bak_Cyrl bam_Latn ban_Latn
bel_Cyrl bem_Latn ben_Beng bho_Deva bjn_Arab bjn_Latn bod_Tibt bos_Latn bug_Latn bul_Cyrl cat_Latn ceb_Latn ces_Latn
cjk_Latn ckb_Arab crh_Latn cym_Latn dan_Latn deu_Latn dik_Latn dyu_Latn dzo_Tibt ell_Grek eng_Latn epo_Latn est_Latn
eus_Latn ewe_Latn fao_Latn fij_Latn fin_Latn fon_Latn fra_Latn fur_Latn fuv_Latn gaz_Latn gla_Latn gle_Latn glg_Latn
grn_Latn guj_Gujr hat_Latn hau_Latn heb_Hebr hin_Deva hne_Deva hrv_Latn hun_Latn hye_Armn ibo_Latn ilo_Latn ind_Latn
isl_Latn ita_Latn jav_Latn jpn_Jpan kab_Latn kac_Latn kam_Latn kan_Knda kas_Arab kas_Deva kat_Geor kaz_Cyrl kbp_Latn
kea_Latn khk_Cyrl khm_Khmr kik_Latn kin_Latn kir_Cyrl kmb_Latn kmr_Latn knc_Arab knc_Latn kon_Latn kor_Hang lao_Laoo
lij_Latn lim_Latn lin_Latn lit_Latn lmo_Latn ltg_Latn ltz_Latn lua_Latn lug_Latn luo_Latn lus_Latn lvs_Latn mag_Deva
mai_Deva mal_Mlym mar_Deva min_Arab min_Latn mkd_Cyrl mlt_Latn mni_Beng mos_Latn mri_Latn mya_Mymr nld_Latn nno_Latn
nob_Latn npi_Deva nso_Latn nus_Latn nya_Latn oci_Latn ory_Orya pag_Latn pan_Guru pap_Latn pbt_Arab pes_Arab plt_Latn
pol_Latn por_Latn prs_Arab quy_Latn ron_Latn run_Latn rus_Cyrl sag_Latn san_Deva sat_Olck scn_Latn shn_Mymr sin_Sinh
slk_Latn slv_Latn smo_Latn sna_Latn snd_Arab som_Latn sot_Latn spa_Latn srd_Latn srp_Cyrl ssw_Latn sun_Latn swe_Latn
swh_Latn szl_Latn taq_Latn taq_Tfng tam_Taml tat_Cyrl tel_Telu tgk_Cyrl tgl_Latn tha_Thai tir_Ethi tpi_Latn tsn_Latn
tso_Latn tuk_Latn tum_Latn tur_Latn twi_Latn tzm_Tfng uig_Arab ukr_Cyrl umb_Latn urd_Arab uzn_Latn vec_Latn vie_Latn
war_Latn wol_Latn xho_Latn ydd_Hebr yor_Latn yue_Hant zho_Hans zho_Hant zsm_Latn zul_Latn als_Latn""".split()


def test_the_list_is_flores200():
    assert len(FLORES200) == len(set(FLORES200)) == 204


@pytest.mark.parametrize("layout", ["dev", "devtest", "txt"])
def test_a_whole_flores200_folder_loads_as_204_languages(tmp_path, layout):
    """Files with FLORES-200 names (text of the project's own, 3 aligned lines each) load as 204
    distinct languages; nothing merged, nothing dropped, no internal error (prs_Arab used to crash)."""
    d = tmp_path / "flores"
    d.mkdir()
    for i, code in enumerate(FLORES200):
        (d / f"{code}.{layout}").write_text(f"Sentence one of {code}.\nTwo {i}.\nThree.\n", encoding="utf-8")
    c = load_corpus(d)
    assert len(c.languages) == 204 and len(set(c.languages)) == 204
    segs = list(c)
    assert len(segs) == 3 and all(len(s.texts) == 204 for s in segs)
    texts = {t for s in segs[:1] for t in s.texts.values()}
    assert len(texts) == 204        # every file's text kept, under its own language
    # one label per (language, script, region): Iranian Persian and Dari, Acehnese and Arabic in two scripts each,
    # Kashmiri and Tamasheq likewise, Akan beside Twi; the script written where it is not the language's usual one
    assert {"fa", "fa-AF", "ace", "ace-Arab", "ar", "ar-Latn", "ks", "ks-Deva", "taq", "taq-Tfng", "ak", "tw", "zh",
            "zh-Hant", "yue"} <= set(c.languages)


@pytest.mark.parametrize("names", [("en.txt", "eng_Latn.txt"), ("zh.txt", "zho_Hans.txt"), ("en.txt", "en-Latn.txt"),
                                   ("en.dev", "eng_Latn.dev")])
def test_one_language_spelled_twice_in_a_folder_is_refused(tmp_path, names, capsys):
    d = tmp_path / "d"
    d.mkdir()
    for n in names:
        (d / n).write_text("a\nb\n")
    (d / "fr.txt").write_text("c\nd\n")
    with pytest.raises(TokstatError, match=r"two files for language"):
        load_corpus(d)
    assert main(["corpus", "info", str(d)]) == 2
    assert "two files for language" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl"])
def test_one_language_spelled_twice_in_columns_is_refused(tmp_path, fmt, capsys):
    rows = [("a", "b", "甲"), ("c", "d", "乙")]
    if fmt == "jsonl":
        import json

        text = "".join(json.dumps({"en": a, "eng_Latn": b, "zh": z}) + "\n" for a, b, z in rows)
    else:
        sep = "\t" if fmt == "tsv" else ","
        text = sep.join(("en", "eng_Latn", "zh")) + "\n" + "".join(sep.join(r) + "\n" for r in rows)
    p = tmp_path / f"c.{fmt}"
    p.write_text(text, encoding="utf-8")
    rc = main(["corpus", "info", str(p)])
    err = capsys.readouterr().err
    assert rc == 2 and re.search(r"(two columns|twice|same language|are both language en)", err) and "internal" not in err, err


import re  # noqa: E402


def test_regions_and_scripts_stay_apart(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for n in ("en.txt", "en-GB.txt", "srp_Cyrl.txt", "srp_Latn.txt", "zho_Hant.txt", "zho_Hans.txt"):
        (d / n).write_text("a\n")
    assert sorted(load_corpus(d).languages) == ["en", "en-GB", "sr", "sr-Latn", "zh", "zh-Hant"]   # BCP-47: a script only where not the usual one
