public import X509
import _CryptoExtras

/// Fixed RSA-2048 keys generated once for IAPKit's tests (never used anywhere else), so every test run mints the
/// same certificates: keys are inputs, like time and randomness.
public enum TestKeys {
    public static let rootPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCjBLjamzrmzi/x
        bFXpSjDJgPR6Ch2WU62INWZCGniwzvxJ1rOIdkLDjzKOIRpiVWWvNg0SeSLBySn+
        UKPCATQCo9YZwl+QYHXK+791/QOC2IqhUqfgCIAaTRmyRIkTSBhI3YSrsamsgrFD
        dfornOALTik63BhyNOtayc/i2Is9KV0QPIwmTOsj3BsmL4k2Ym/DOhoMw9coXRWJ
        vFa9BDOPu3BByqSZRwBGyxmHTWljttL4U8StX3xVzGQyDCauNAt7I4tvm1BKOjgL
        QJ5Q8toBXNmy5CApV9IdWXgA92ZZzTiPsULcLrj3MTrGDelk+yEHfCHIMX5aqjBZ
        FtTa9YSHAgMBAAECggEAA96efgnwmalL+AtzSp4JOcScM7K+cGK8xslFtndRusNf
        DRL8oKugpWsRGdCYA2eK32AwFT/XibQQZsoGk8SwNbPVPDf3SW0Qvr2/wLmTIML/
        yhk1L5s5YeZx9V+tGqO7zSxSSY+7uwLrLvJuUCS2023f4AF4zxU0f6uKChTL0VV6
        p6aUsDVPenxeCUAfW/4zCQfXVpKjwIPHGiOLMCATcEwMAv3ruwpY4ifdHgb4M35X
        hN2oZjpP7ONLs/lMi6wVEmm4WHDHCUE/GL8s1jG4Gn5/8WcQzJi/c4gbxcvFsrAS
        0cvnSxCFZwYV9RK9L7tTYXfv3u9OHsbpYWjROPYX6QKBgQDS3jNC02+C+tIEUtPo
        3X96IT96MdMqNhi1JRijeXSfwUeWEw2aFFiZSO+7Zrvp0GslJ8INPjbOldorYH//
        o3UtyKdic44JziqLm4wSjJxCluSKeBKln6ccfiRonsXTlor9ZFJAsRVVbFV5WjCN
        UpqB2nqJA/ecFN87cy9jEgqSewKBgQDF6MS4DV20jK2hZJVJVLxIiHAPMaqvK4Bk
        56HkI0ODSgMF8vWj8zpxAHoDXPKNDERvr8rwjiTCSW1FK8fbZ3QysWwSsA9WDr9B
        eUKFEaUJldB/E+0JYFnCW1EKPjrfNQ/Y5NITZcSQUpu+tRa/jYxgSwN19K/5TCaJ
        HQ3K5yUOZQKBgHl7QZTyMoAG+A89mI/Da7l0hhljsv/SgpF5eaRUSHfw5cjz2RY3
        OoO0nUgde4zMYa3aJdVzTifd9P6gbZ1dEhj6TFRPtji36ZLcXeohz7QdMjUDz9pT
        C/dCRL9xGQ8434Hz1d8nJd88tlFfQDFqsVC2CXn+KxxkeebKCTbOIgEZAoGBAJt2
        erk9vqMqcuY51c9R4cl0a9pzoGmT2XrqPdCxJsKGLBPLQ8xzLzA/OJlVtS65OTUm
        uVr3vcZk2ZIhjxA5lxyPJJ8VcCag1PpAn9FaB/OcnLiGVYgtCLVU+Db8pVBbJUSy
        kpcsNRlN2wwWwnTcYy3tHx3UhTtm50qD6Sa/JevFAoGAIoUPW+jyie7Y2Nt/dbwh
        WbznenUBF5WjSNovEpFnLycFhChlfEpwUwCf5swHKzCYTw/3fJ0WWhxENEcKsm7C
        INBTwTxeuIk7H0Vt7VOhoVS4OE+49DFpKV3eWnzLhGovhC/pa7cRapjo2KUrI4PP
        dywr8CCZKcsHPBF6sMBPizE=
        -----END PRIVATE KEY-----
        """
    public static let intermediatePEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCs3nVO6R5Izzwi
        h/DMSitP7Yy79zN+M6ZZJnJn8CpN57MdWXEeBVPyRWQD72o2tGrcsvzM5WqJ1Uc2
        uQzvVijIeG0hxcQdWhrti4TJYOjM2vkSdcBidUpsHn3hwmGzrNyJZR5+oiZLHzMG
        bCviFP7BXl87QvCOgGIUs5sekNyNUui6u9ZOxu6uaduj4Szzc8CC53OeoMU7g/bz
        IbLv9MeJVXa0vAKj/KPF9fwSkLSXvKAOlfi9C+thg//rttp/IOBa1slJ6n7CIfE5
        uUVyXkD6Benarfs2ezTW3XYPYRNcDh7usvJah705kuf50NERbVe+tIZlt2HYCp+J
        ogXHN+6hAgMBAAECggEAAmJqO2qrWzZCKcWZZWf6qrvTqKO7JciS8SOS78fpcn/C
        uL8ddNxLRHJPnDMzLbZkOT01wxAnm8o9+13LgE8AMGGkhIRsbA5PO3ZfOdvemUQW
        lhsG5Cq4kwR3ZVqtWTxlMMAVqHtjO8ZRZPkVn7OWuI8ee0VSY1/Gl9GJI0T+mXZa
        zxfcD/ZNpGEgX8gzcSGNvkMQDWtXfv8QLWG61zX89s0+5+VtK+b15INtGiuoOCxr
        eCKvbjmoekDAymbR61to+YNOAyPPX6azldtw/1AbP2Q//Gl/8pplM/kAJFf+qOfJ
        LJ9v64r0Dlm78G/p32Ntw1DTOowDJ7y9ugfqKEsodQKBgQDphcngEPhDsuqgDf91
        mz5GrsESMtyYi6GhyInHcJDfKtezg/z/gviqgVHn3Jwb8k+6/YtGPmoZvo3/vpt0
        oM3fvoiqipA+bo3NPiPt8tzFiE+aAkS2YsYAShMuZ4BeVyaFyGwkd3NZVAzoKc0X
        ozkCDUVK/sUmOMVL8ShEq7rh5wKBgQC9ghvEE9LCya4HmcO0+hWTQVLqOKWxxAK0
        jMJFezki3SQrbCvm1Gb65debnofT+p2NPYQoLvLGgP4/4jHn7RQUZCtuAU5sCuGr
        P48IBbPgtg5Lc010T1F6gANU2BqAiwl+iv5a2+Xn+TZY+n64nePXHNduXGAfvuu+
        /bGi0cKqNwKBgQDEjeG/gUkV4nBty5pr6QFgCRNlN/5JP64KOHsPrYWi8bKg3MWE
        Yz7edP71w9B6DVhisaoas8omZSesTUkXv4nJe9wYf4ytn+wnBtjDHZoJgZROsv4W
        7chu0eqXMnLv9TbtgCbWAtzKIV7Dwvtnm/EN8xGR8CMM6tfV9ePI+SrRnQKBgDC7
        hZJdmqQ2oscXlokyilvMv5q1qH5XLm7ph4fAkUfS4Fs+POfmFPlOI6zEDp/HYb6R
        ZCvFLu82+qrI6xZ+E9zOiZCHS3hjL/cOqCRi+we9KV3jr7ZKM2SyCKlHzUDjADUH
        XzNUOwH1RzGIcQ/eolmN9CRQIvPm7860hHqfQFTvAoGAXHswjBVivPRhlKVQnVlm
        AzQ/R3C2VC5FSGiGVV/av/nOMeI9aonAlTWFYbEK8Qlw3y0WRG0uZSuUBKa6KYWi
        8B0bOtet/q7YKeIi25YI4YMLfK2MuFcn9a+MijJaEiI6kTQCXAimqx/Lsei16zPn
        j1+6FTuy/6EngO1Ld7vSNuY=
        -----END PRIVATE KEY-----
        """
    public static let leafPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDIE5yMiBwTT647
        D+JGpgu8+YJNbr9inuGJubr4xTFYN7/F7mnYcDu/UVTszk3ycFikg2inQUVHM0qu
        PG3dVPWD0vnnEoRbF6pA17ggSCARatNwEplXBQVwarCe+Jhxt3Dt8TCgH9As5VAJ
        /dhzr7ZvOuwpfqKInkTNQ0jUZw7kfm+9jz4gw2nO/glShbPdNr6szfzufIjThXz1
        otTKNxPr42m5zG4EP6qMqeQBZOWQ17EzsR7/9GRb5qY6IZ6pi1ZglWG9zzy5tBR9
        MTf30TCMiN/tTC2rOrMPoMZC0bZrSNZAmDaPCOkZA/3xiezd/gM4OUXAstVa37Va
        E6rqWak/AgMBAAECggEAQbSjFEm8wqDHzLCuNFpif3iHUMuegZJA6jx7CSilSF3i
        lmtyCjjtfiqFE9G6qnQ3wCtBqq/WQwg2rdq9j9LPYC/gjwC3Q70VVf8iAkP9eArX
        jjYlcnz9KMp433QviCTgqturBuL7uErEist5EqDxbjzxAr2KPgiP+sLuf4aqzuGb
        09YLFQtdefovQclekqqjL/7yN8ws3RZ3NR51vZc7itIK5CfGAqEjV3Fp/5GfnGUk
        eQTpOcd+uDUnI7RcwUto4D4xIAZo5l75tp4ZfZDDskL/QzIseUpVK9h1z0nZ0JHh
        mlKPv3h4f+vlwIZJOQn2SHs4M+ozsSx/SGwIH6MTQQKBgQD0giA4lYRi9AoPQ/0F
        Qqs58M96WR1w1Rec+0l82FLq32cEDeAMlZtUF0iTnbJrFedVOjzeJxw6uI3OmY1u
        8SdA9kIF06RSQAmR+NbL9ovimYtm7mcPTmlz6kjUL60pB010RcwVh4cdS+FFRiYl
        3dUgrdsHeWNX7tmFKXTEePLG/wKBgQDReuR8rzdD7ft8QrUv5ZRBuxtALGXGyvCX
        n1wcVbjsEiKDfSJfs+PfaUGuZGEx7eiNVbWfaw4lXxkGJgF2QMKAGfu0MX4mFlkk
        8Q89wc900ff3FliHeZYqwCY2dZwXUglnghoE/lh7FhkPmgFlDqUhn7HrSfC5lgJ1
        tuNrBfldwQKBgQDsy/FEm5kg9FOhwSiUJaMKdCubxB59HgLGZ58eJ6r2CPINvRpV
        Vbae1AXX4Ivgpc/qfIJia+ItBHthsNiGr0pi4ZvDZNrpRVd/ZU0xL07+X9HgF9b7
        vebm+ekahinfaFEc4FPsLdsvBkPfATcEyTgVdAqBzI/no0xKaIHLnY8SJQKBgCCd
        nc28CkLNXwat7EAU4syJMWkAgKg/GM7CxTi0MCKxgCYw6ZU1ERnL7aoVfvyjKj43
        RhwYMw+miuLmL/wVgTMo2IPp4NZVTHPwBIt9DawGtTEHjakqSTNGz6xTC4amA0jW
        fO6iG2yuuCAxvl3ZteRSVQVpcc2ziZaCb05Ok9EBAoGBAKB/bqbo0grqHZ4Q8f5c
        OdT1b1fO3g9FPXuQUT50oatT2ENH4vkzUvlCATYRpalLPxEVTN4Mbr3iSeGaHEcI
        PUPEIXQDM6+X2X/eCqJEnIm4rB/HoSrvTqxkqh9GXV9jFDytrkiwpWK+ej7uKf4d
        vpUjqEdV5jMrwnqbbESmb5EG
        -----END PRIVATE KEY-----
        """
    public static let rogueRootPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7pSFrwV5/60VV
        OKFrNG+cX8wSF3t+hzXVY3snnCwzpF1TAnhNlc5MAsEdkUIQ3w/a8cQteHfOy5HN
        BpO+ajpUoSCmZPM/PMTT25pW/b7l+bmZ94RYz0gIuG7Gh82nVTfIApAF/i+2hhbo
        JVkXTgMmS9yP5WPZ2fOBJqSogcxJ4Ca8ZKgGhbUybAeweEo+NIOsTv2BMJryUiJE
        tPDiZBGq95+/2xY7o9DhtmkK+7Kz58DpOpco5kgJsa1gHau84paUDSC6uGwInyCU
        73b0241WHw9OYogswoDSwuYDkfS/ZjkVZ1/86nRFb6CT+AWggi+slMs+3bJgkHbc
        ATsEJXtRAgMBAAECggEADXA6kAKFt4iMaxmGqexT7/GGZmdLH1kkmFcrCz+qhLpJ
        OrgrEHdhkl0CIpF0F0w6UPZOk+kUP3mhw/qsGw91hPkTIweIyicae4e3KnK6uLKl
        QasRzeBuar12pX41Ur4OJCNW2C8HkL1Sp6aBFmOuYxA8yAtoFsJ+p2mykiTVkha9
        Yy9AzhJfUt/lnoQI/gPYXhosx7qy3RhAcDw1RMLyTTf5+RpRvefno1JH5jcGArfT
        yTDJOZycLGLm2E9N37RJgM0qALIcugs0SUUb57R/nEInO+mVdWFChxst2dFnYG5q
        xYebG0VIiGHnzZne060dzu0iky5y2JDjWvALTphHxwKBgQD2hEJsP98A0q/+7+Qd
        UjL3+GRyf9mBt+BFmqcwlLrjnaFLGbOjUHRyUsKDai9zvh0PbWceBmOu1bKGqzex
        PJK7LvyEw1NgbYOWdOowWBBXHjRUASqSbAefmcf5gc8CBhlWWPcySHt4FFK3K4LH
        XFUa/cxHerzOtxIefyVuxSjwrwKBgQDC3RfJ+wDX7ED7/mw4z0U9mW7YPnwS8JYo
        q994hpex+94+HkUu/+5L62GSbBXy/r7pY8u0kMdjuTAXZUixOLb8zECJUfU8QA0K
        TcLVECGeaOjun53TuDyP4NOZrsX29b7s1Fy58WRVJK4tpEFnTsm0Dnuis8qZl1hV
        J3dJvjtT/wKBgCDL4cZjDPkgDpgdND0OZYeF/V8aUUanvuejtqCI+QA1RXMnXTXa
        C1P2XLh9FQkR/u3BgVmGQhbNiW3PM56Zz2+lxaSoE9ydVUdcEJgT70CX3SBb81z9
        kFoUbH1uXqsHQrGxLln7OKn2EjcaS9DYIN5xa48K7jmWM4vpIILHKjYzAoGAGKku
        Z4tykeD+YGXUgGQK2T7fvlI6FZOJDWCjCXfPHuFHQQlHrCkLmWQSlxtCs9v1gUf1
        8cYY1dAL/An/Zx5MWjXnPPm4VYWtoM4yiBBgkNGqGPjuWmsIjxTe8qYhu51iKkq9
        6XJZRkU8Hd6ZwF9CO51RnEewrjtvHGfAOv7uNzUCgYEA2FkmFazpmo132hUiSUlS
        7yG9xy9kTgbEa7IxJ9IKhupkeozJDb61dAaSzDGFlIJjsZQGTIe2nb3WkS2zp+tl
        zO0Nhb6O63zzENFY5AlCt/jY7Qqe8vvF/SY78bFtDPwLBc7vrUtV9m+KmsTgi3Ko
        uxqy/FLjhV7hjasHBMbPbq0=
        -----END PRIVATE KEY-----
        """
    public static let rogueIntermediatePEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC6JMuXTSdRpbcs
        +zi3SUp52mdQErYKU1hoL4J5lY2cpc7B+wsxJb4mgWnNcw6psZq+FxZNOwcLemMW
        2kkI89EiKMDh4lAOsXae3Vqe6zMgdHCWEGPirjTM5a4v7zmfVEJJ9m6EC1GLKjLi
        yjOHdAeIP+RN89IxJsv+st2gU8y180kX/JQH8Wg2ypaf64/fkuKfQOQZeDd1msck
        qGy8dhjr2GemZolPAuZxk5BnynYGVd4zypppMpAUrJ3uTrAuF8Gfnw84M53Pomo2
        SJu7Tvce1Wu3wCltxsarUHauMFFCluxmXRtgLT4qDndQF1rrkZNboK+55Hei71l5
        DIPGFE/hAgMBAAECggEAGfOhUtHV5oM1G5dW2+7i7EQv3TEOojfmfngJN8xK9wkC
        33aRo+OANDwctSESbUQur8vmNxRAsi/4+qmqPw5HHP0TjyqPQM0rHZD83mUqNp8l
        Rza3xlXFVL+83j/7B6SmrUsnM0+kqcNTXt0T/BGIL03BFcElj+a50CO91Gl6g+9O
        slPzKPi3opYI329UnMJ5PyMRZa1uyN/BtKInmNBEQG/1YQpwEg9gU1JeH+Cr1PB+
        BwW4Tc/YRrK28bVz1e5JCZR8gF+F0FnlFRgc+DHHPCTesaJ1DZMWf6ami1qF4OZk
        +tC0sHIDaleeH2/K9oHtti3cl9y9ru0tcG1cAPJqhQKBgQD+DkJWwBxhRnD6rtcp
        +O0CTrA7JqVYBbNRVXC09mRR2v7K39g0BB2yI6PRKW3E8FsqVXlU2WUWxtFDNjBi
        vVhFz/R47tNeqgOQkL16oxMWADFr6gqDksJkV+6J6Y6p1saFh60XnuyDbEJR8cQg
        8iPf9cMeEUbzfbqZEJUk9EIg3wKBgQC7kXv/cnqYn6rnhV98Hd5xvSA1fmLJvh12
        ajeD6dL80AK4SgyijVdlCT6+wqsmb5mCX9LRTOQ//gGGW/v3GzvbMCU/UqYzxnOi
        ZUPLNgYoLOYZHh3pUmXM6c6EWFcXeykGpn4LZklyaseCjfxqaLDaiTVFg3tuW1AH
        5JdpLXvnPwKBgBe6azXBAaWQN7MiK1RvPGuvv8P2ixDaj3H0Qe+U56/BfXSjTYUm
        MUPXElDRxr/TFyCwFQH4v/lNnnPhlslSF/GFR7cXz0QTKvwQmLHgk0LFx9flZw/8
        4A0RLWVSHBH+zlHgZylCnaJ0tQkERKYzF2iugofHY1IQlyH+q39lFNwPAoGAFbD2
        cQ0xJlNYtVuUNktR/T9M6ULLc987kwUnlGbHEpuPpPZTTb0gvTt7eR4UIubHDu+7
        9p54yvm5/WrH0cThgDCqLg+FzvkFSGODmo2N2rmOhpsYBHKV+UOUsXNx5vJERVOd
        wf27QrMcjXmUFk4zHaK+eWKCNLn0oGUMKYqsCIsCgYEA1Il5JgR4nLme07F9ZQyQ
        mmzWftHfevjL7vMluyawzeFqUJxJOK3FGqn4LFFGVu4ZEO5YMdlYWVy6LaPocQOm
        dCIX4PWlIC8MrR7vaMyaVmHSfqr6rLTZBBRnykBwYHxvp9zCtrBrJxUAtDWAfggI
        PnkAE9mJSm4i8DmuzH1fwxo=
        -----END PRIVATE KEY-----
        """
    public static let rogueLeafPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDmzFVPdAMYqvxX
        xMIYXhnzFDVmSjyWPWl1Z6B1fdUzS4TvyX7duba8dLGw6yBSOvBE+9rB7yZ0/ue+
        cTN7U4ami/dneu99LO1d4a221FigAR6rCUBiSnh5U717vHcqizoEVOzabc5D/SPj
        x2Esvq6FLFczwiqJgKk4V4JVJ5RXXnql0/AxAhCayanUvfzjiWoFkyak08viwgPf
        A8/6Ql3CH5x9n5mJaKNRk8pap5op+mNd17kodkDczoy9FnDTxuURcH7WZC+XoGqg
        VKrUYWjm+1rDyCzAteSCbBGlj+xwk61kvGiZzAYukIxPq4PrK7FmlWVL5quZwEET
        d7wqSGndAgMBAAECggEACUXCU6vch/wuoTQVfDcjocF5F7/5ySt0djQQnUfN7f6l
        u6CDyVKxxcaGcQ4xQTx+9LaNpmb+S4sGMn+HyvejHEPZT73/qy7H5pKvkP3dBail
        28dGX+yQBIfZwAPlYb8wOIZU8b2hoNelvnv/KnYKuuz6H+k4HkgeBFZ3tQYfDpd4
        mrjTbkShzzgkJ1lU+/mDOsm4sB+Pao8b2dLEULdH6KOsz8VtDtMdRH7lFCFWq3M5
        aBzdISGuCYYBHbin/8YFAypp/CBLJUFCUPK6ruhNnONpIYRJOuTnrY/glfBKRNnN
        VpOND8xoZ3uQIy0So0uJ+V5cKOKadpeMjVNdxKMpAQKBgQD4Z5XGmU5KxHbFVOQ1
        JbqxrAO2zBC2ltnwxAbTamRJx+bCc2ratYhQK49SaXt3y/5LeSNDnRRkFvqcVgBh
        RgbYxHPApD5/tCKke+YroJg+DYD5Oc4nRfC3MYCh213uuplvI5iqkDPzSRpSIWK/
        S9N1eDf7rKW5avYiZfxKQgPFwQKBgQDt2u6Er4RReGgmLXOosjBp9IuyK8Urc+nI
        7Wz6qu+dj+VKGYt9LLm3bY+keEcu1TIqblpOQ9dk3xpd6FLa6W8UD5hjuMe9J82K
        0DprNXCjyCtVS5z/0qaXilO/Vv4mC+tyO/9RNLenLc1hSqd8WL2E3FhnEgFTS0an
        fSsHWHnDHQKBgHn5u2Ui4Hv8TuoFDm4+kZcvBT/copRWLLx6NXPY+Vf1bg2ryRuO
        KlpbmWv5WeRwafU7jaJk3p9rXTIpVNRvI2uLw98jh4EDvkMQh+yCVl+aF+vJg75r
        LJF4IFbaNhzEyhT14MBYQPpEukT8GdYfcL1tA+h0VYhfym8Hr0PzeJDBAoGAZqX0
        B6kjhnFbKRa2clgsEp3p58OB/OWyP/dO78LzU+E0x8zMaQHzSBjtQ8JwneJ+Gtey
        +1HF1A+AdoR7tWPGfzbXwjmNYbGav8xrWbcfXF9XbCEMqU7EfGPDDrFBTzQXsR35
        apdAptJabyFjtIMrjvn04M5hagvzevbGqg3hxnUCgYEApJoJGkJxuTRwhaFDxhnd
        xZRXcdf7ICXus8DiaHdhVFnJACGFxEdzVyTaRA3RwuNIL3vznlewkWSCnIyg5t4Y
        AWGaAm0TLzHJNTLSl4NIKQal8MJH/J6oow8F0HoSV/QJDkpmLi3Lw3cEfy6Bf3L4
        JlTPaVpj/ktIjoHl7o3xC0k=
        -----END PRIVATE KEY-----
        """

    /// The key for one of the PEM texts above.
    public static func rsa(_ pem: String) -> Certificate.PrivateKey {
        // The PEM texts above are valid keys: a failure here is a broken test file.
        Certificate.PrivateKey(try! _RSA.Signing.PrivateKey(pemRepresentation: pem))
    }

    public static var root: Certificate.PrivateKey { rsa(rootPEM) }
    public static var intermediate: Certificate.PrivateKey { rsa(intermediatePEM) }
    public static var leaf: Certificate.PrivateKey { rsa(leafPEM) }
    public static var rogueRoot: Certificate.PrivateKey { rsa(rogueRootPEM) }
    public static var rogueIntermediate: Certificate.PrivateKey { rsa(rogueIntermediatePEM) }
    public static var rogueLeaf: Certificate.PrivateKey { rsa(rogueLeafPEM) }
}
