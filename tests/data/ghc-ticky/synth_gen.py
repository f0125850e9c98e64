"""Write the synthesised GHC 9.4+ ticky files (format strings of rts/Ticky.c, 9.4+).

Usage: python synth_gen.py tests/data/ghc-ticky   (percent formatting mirrors the C printf)
"""
# ruff: noqa: UP031

import json
import sys


def report(json_args: bool) -> str:
    o = []
    w = o.append
    w("'./synth-ticky' '10' +RTS '-rsynth.ticky' \n")
    # closures: (entries, alloc, allocd, arity, kinds, subTy, fvs, name)
    rows = [
        (1200, 96000, 0, 2, "LI", "fun", "", "Synth.Eval.$weval{v r1Ab} (fun)"),
        (5400, 172800, 0, 1, "M", "fun", "MI", "go{v s2Cd} (Synth.Eval) (fun) in r1Ab"),
        (5400, 0, 86400, 0, "", "thk", "LLMMIIdd>>SS", "sat_s3Ef{v} (Synth.Eval) (thk) in s2Cd"),
        (300, 4800, 0, 0, "", "con", "I", "sat_s4Gh{v} (Synth.Eval) (con: Synth.Types.Leaf) in r1Ab"),
        (77, 0, 0, 1, "i", "lne", "", "$j{v s5Ij} (Synth.Eval) (LNE) in r1Ab"),
        (10, 2560, 0, 3, "SMI", "fun", "", "Synth.Main.$wloop{v r6Kl} (fun)"),
        (1, 64, 0, 0, "", "fun", "", "Synth.Main.main1{v r7Mn} (fun)"),
        (1, 0, 0, 0, "", "fun", "", ":Synth.Main.main{v 01D} (fun)"),
    ]
    entries = sum(r[0] for r in rows)
    thk, con = 5400, 0
    fun = entries - thk
    w("\nSTACK USAGE:\n")
    w("\nENTERS: %lu  of which %lu (%.1f%%) direct to the entry code\n\t\t  [the rest indirected via Node's info ptr]\n" % (entries, entries, 100.0))
    w("%11lu (%5.1f%%) thunks\n" % (thk, 100.0 * thk / entries))
    w("%11lu (%5.1f%%) data values\n" % (con, 0.0))
    w("%11lu (%5.1f%%) normal indirections\n" % (0, 0.0))
    w("%11d (%5.1f%%) permanent indirections\n" % (0, 0.0))
    w("\nFUNCTION ENTRIES: %lu\n" % fun)
    w("\nTAIL CALLS: %lu, of which %lu (%.0f%%) were to known functions\n" % (6400, 6000, 100.0 * 6000 / 6400))
    w("\nSLOW APPLICATIONS: %d evaluated, %d unevaluated\n" % (400, 0))
    w("\n")
    w("         Too few args   Correct args   Too many args\n")
    w("   FUN     %8d       %8d        %8d\n" % (0, 400, 0))
    w("   PAP     %8d       %8d        %8d\n" % (0, 0, 0))
    w("\n")
    w("\nRETURNS: %lu\n" % 9000)
    w("%11lu (%5.1f%%) from entering a new constructor\n\t\t  [the rest from entering an existing constructor]\n" % (5700, 100.0 * 5700 / 9000))
    hst = {"RET_NEW": (5700, [0, 300, 5400, 0, 0, 0, 0, 0, 0]),
           "RET_OLD": (0, [0] * 9),
           "RET_UNBOXED_TUP": (3300, [0, 0, 3300, 0, 0, 0, 0, 0, 0])}
    first = True
    for name, (tot, bins) in hst.items():
        lbl = (name + ":").ljust(17)
        w(("\n" if first else "") + "%s%11d: " % (lbl, tot))
        first = False
        for b in bins:
            w("%5.1f%%" % (100.0 * b / tot if tot else 0.0))
        w("\n")
    w("\nUPDATE FRAMES: %d (%d omitted from thunks)" % (5400, 0))
    w("\nCATCH FRAMES:  %d" % 1)
    w("\nUPDATES: %ld\n" % 0)
    w("%11lu (%5.1f%%) data values\n\t\t  [%d in place, %d allocated new space]\n" % (0, 0.0, 0, 0))
    w("%11lu (%5.1f%%) partial applications\n\t\t  [%d in place, %d allocated new space]\n" % (0, 0.0, 0, 0))
    w("%11d (%5.1f%%) updates by squeezing\n" % (0, 0.0))
    w("\nTOTAL TAG PREDICTIONS MADE: %9d \n" % 120)
    w("TAGGED PREDICTIONS HIT:     %9d \n" % 100)
    w("UNTAGGED PREDICTIONS HIT:   %9d \n" % 15)
    w("UNTAGGED PREDICTIONS MISS:  %9d \n" % 5)
    w("\nThe following table is explained by https://gitlab.haskell.org/ghc/ghc/wikis/debugging/ticky-ticky\nAll allocation numbers are in bytes.\n")
    w("\n**************************************************\n\n")
    w("%11s%12s%12s  %-63s %s\n" % ("Entries", "Alloc", "Alloc'd", "Non-void Arguments", "STG Name"))
    w("-" * 80 + "\n")
    for e, a, d, ar, kinds, sub, fvs, name in rows:
        if json_args:
            field = json.dumps({"type": "entCntr", "subTy": sub, "fvs_c": len(fvs), "fvs": fvs,
                                "args": kinds}, separators=(",", ":"))
        else:
            field = kinds
        field = field[:60].ljust(60)  # %-60.60s
        w("%11d%12d%12d %3d %s %s" % (e, a, d, ar, field, name))
        w("\n")
    w("\n**************************************************\n")
    alloc_tot = sum(r[1] for r in rows)
    ctrs = [("ALLOC_HEAP_ctr", 420), ("ALLOC_HEAP_tot", alloc_tot), ("HEAP_CHK_ctr", 430),
            ("STK_CHK_ctr", 6100), ("ALLOC_RTS_ctr", 0), ("ALLOC_RTS_tot", 0),
            ("ALLOC_FUN_ctr", 5400), ("ALLOC_FUN_gds", 172800), ("ALLOC_PAP_ctr", 0),
            ("ALLOC_PAP_adm", 0), ("ALLOC_PAP_gds", 0), ("ALLOC_UP_THK_ctr", 5400),
            ("ALLOC_SE_THK_ctr", 0), ("ALLOC_THK_gds", 86400), ("ALLOC_CON_ctr", 300),
            ("ALLOC_CON_gds", 4800), ("ALLOC_PRIM_ctr", 0), ("ALLOC_PRIM_gds", 0),
            ("ALLOC_PRIM_slp", 0), ("ALLOC_TSO_ctr", 1), ("ALLOC_TSO_tot", 120),
            ("ALLOC_STACK_ctr", 1), ("ALLOC_STACK_tot", 1024), ("ENT_VIA_NODE_ctr", 0),
            ("ENT_STATIC_CON_ctr", 0), ("ENT_DYN_CON_ctr", 0), ("ENT_STATIC_FUN_DIRECT_ctr", 1212),
            ("ENT_DYN_FUN_DIRECT_ctr", 5400), ("ENT_LNE_ctr", 77), ("ENT_STATIC_IND_ctr", 0),
            ("ENT_DYN_IND_ctr", 0)]
    for n, v in ctrs:
        w("%11d %s\n" % (v, n))
    w("%11d %s\n" % (0, "ENT_PERM_IND_ctr requires +RTS -Z"))
    ctrs = [("ENT_AP_ctr", 0), ("ENT_PAP_ctr", 0), ("ENT_AP_STACK_ctr", 0), ("ENT_CONTINUATION_ctr", 0),
            ("ENT_BH_ctr", 0), ("ENT_STATIC_THK_SINGLE_ctr", 0), ("ENT_STATIC_THK_MANY_ctr", 0),
            ("ENT_DYN_THK_SINGLE_ctr", 0), ("ENT_DYN_THK_MANY_ctr", 5400),
            ("UPD_CAF_BH_UPDATABLE_ctr", 0), ("UPD_CAF_BH_SINGLE_ENTRY_ctr", 0)]
    ctrs += [(f"SLOW_CALL_fast_{p}_ctr", 400 if p == "p" else 0) for p in
             ("v16", "v", "f", "d", "l", "n", "p", "pv", "pp", "ppv", "ppp", "pppv", "pppp", "ppppp", "pppppp")]
    ctrs += [("VERY_SLOW_CALL_ctr", 0), ("UNKNOWN_CALL_ctr", 400), ("KNOWN_CALL_ctr", 6000),
             ("KNOWN_CALL_TOO_FEW_ARGS_ctr", 0), ("KNOWN_CALL_EXTRA_ARGS_ctr", 0),
             ("MULTI_CHUNK_SLOW_CALL_ctr", 0), ("MULTI_CHUNK_SLOW_CALL_CHUNKS_ctr", 0),
             ("SLOW_CALL_ctr", 400), ("SLOW_CALL_FUN_TOO_FEW_ctr", 0), ("SLOW_CALL_FUN_CORRECT_ctr", 400),
             ("SLOW_CALL_FUN_TOO_MANY_ctr", 0), ("SLOW_CALL_PAP_TOO_FEW_ctr", 0),
             ("SLOW_CALL_PAP_CORRECT_ctr", 0), ("SLOW_CALL_PAP_TOO_MANY_ctr", 0),
             ("SLOW_CALL_UNEVALD_ctr", 0), ("RET_NEW_ctr", 5700), ("RET_OLD_ctr", 0),
             ("RET_UNBOXED_TUP_ctr", 3300)]
    for n, v in ctrs:
        w("%11d %s\n" % (v, n))
    for name, (_tot, bins) in hst.items():
        for i, b in enumerate(bins):
            w("%11d %s_hst_%d\n" % (b, name, i))
    ctrs = [("UPDF_OMITTED_ctr", 0), ("UPDF_PUSHED_ctr", 5400), ("CATCHF_PUSHED_ctr", 1),
            ("UPDF_RCC_PUSHED_ctr", 0), ("UPDF_RCC_OMITTED_ctr", 0), ("UPD_SQUEEZED_ctr", 0),
            ("UPD_CON_IN_NEW_ctr", 0), ("UPD_CON_IN_PLACE_ctr", 0), ("UPD_PAP_IN_NEW_ctr", 0),
            ("UPD_PAP_IN_PLACE_ctr", 0), ("UPD_NEW_IND_ctr", 0)]
    for n, v in ctrs:
        w("%11d %s\n" % (v, n))
    w("%11d %s\n" % (0, "UPD_NEW_PERM_IND_ctr requires +RTS -Z"))
    w("%11d %s\n" % (0, "UPD_OLD_IND_ctr"))
    w("%11d %s\n" % (0, "UPD_OLD_PERM_IND_ctr requires +RTS -Z"))
    for n in ("GC_SEL_ABANDONED_ctr", "GC_SEL_MINOR_ctr", "GC_SEL_MAJOR_ctr", "GC_FAILED_PROMOTION_ctr"):
        w("%11d %s\n" % (0, n))
    return "".join(o)

d = sys.argv[1]
open(f"{d}/synth-ghc-9.4-json.ticky", "w").write(report(True))
open(f"{d}/synth-ghc-9.4-kinds.ticky", "w").write(report(False))
